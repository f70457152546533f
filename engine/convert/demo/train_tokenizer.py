#!/usr/bin/python3
"""Trains the demo model's SentencePiece tokenizer on its training text.

BPE with byte fallback, ids 0/1/2 = <unk>/<s>/</s> and no pad, as LLaMA's; one
thread so that the result is the same on every run. The model records the paths
it was trained with, so training runs inside the work folder with relative paths:
the file is then identical wherever the folder is.

    train_tokenizer.py WORK_DIR VOCAB_SIZE    (reads WORK_DIR/train.txt, writes WORK_DIR/tokenizer.model)
"""

import os
import sys

import sentencepiece as spm


def main():
    work, vocab_size = sys.argv[1], int(sys.argv[2])
    os.chdir(work)
    spm.SentencePieceTrainer.train(
        input="train.txt", model_prefix="tokenizer", model_type="bpe", vocab_size=vocab_size,
        byte_fallback=True, character_coverage=1.0, split_digits=True,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1,
        normalization_rule_name="identity", minloglevel=2)


if __name__ == "__main__":
    main()
