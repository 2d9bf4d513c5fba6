"""Dataset loaders: the embedded digits, BBC News and HumanEval sets; local Tiny-ImageNet, ImageNet-ES, QQP and MBPP copies."""
