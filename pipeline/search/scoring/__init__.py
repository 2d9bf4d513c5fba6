"""Scoring searches: Recall@P*, recovery cost, paired comparisons, summaries and cost in model evaluations."""
