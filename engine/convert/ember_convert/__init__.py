"""Ember's model toolchain: convert Hugging Face ReLU checkpoints to PowerInfer GGUF,
profile neuron activations, train activation predictors."""
