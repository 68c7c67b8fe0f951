# A container image of ./realnet for cloud nodes: Vertex AI / AI Platform
# custom jobs and Kubernetes give each container a TF_CONFIG naming the
# cluster and the task, which ./realnet reads as TensorFlow does.
#
#   docker build -t distlab .
#   docker run -e TF_CONFIG="$TF_CONFIG" -e DISTLAB_SECRET="$SECRET" -p 2222:2222 \
#     distlab --scenario scenarios/mnist_cnn_sync.yaml
#
# Built for any x86-64 CPU (DISTLAB_NATIVE=OFF): a simulated run and a real
# one give the same weights bit for bit only with the same build on the same
# kind of CPU.
FROM debian:12
WORKDIR /opt/distlab
COPY . .
RUN ./setup --quiet && DISTLAB_NATIVE=OFF tools/build --target distlab-realnet \
    && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["/opt/distlab/realnet"]
CMD ["--help"]
