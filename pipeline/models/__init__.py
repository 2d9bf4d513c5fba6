"""Models under test: the digits CNN, text head, code retrieval, paired-records zoo, torchvision, Hugging Face and code LLMs."""
