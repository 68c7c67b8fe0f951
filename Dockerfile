# A container image of ./realnet for cloud nodes: Vertex AI / AI Platform
# custom jobs and Kubernetes give each container a TF_CONFIG naming the
# cluster and the task, which ./realnet reads as TensorFlow does.
#
#   docker build -t distlab .
#   docker run -e TF_CONFIG="$TF_CONFIG" -e DISTLAB_SECRET="$SECRET" -p 2222:2222 \
#     distlab --scenario scenarios/mnist_cnn_sync.yaml
#
# The portable build: it starts on any x86-64 CPU and runs the NN kernels of
# the best ISA level the node's CPU supports (x86-64, x86-64-v3 or
# x86-64-v4; summary.json's isa says which). A simulated run and a real one
# give the same weights bit for bit with the same build on the same level.
FROM debian:12
WORKDIR /opt/distlab
COPY . .
RUN ./setup --quiet && tools/build --target distlab-realnet \
    && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["/opt/distlab/realnet"]
CMD ["--help"]
