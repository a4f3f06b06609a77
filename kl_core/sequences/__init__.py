"""The KL between whole sequences, on a Markov-chain toy language model.

``markov`` (the chains), ``estimators`` (six sequence estimators, exact moments
by dynamic programming), ``montecarlo`` (sampled sequences), ``gradients``
(which per-token losses give the sequence KL's gradient).
"""
