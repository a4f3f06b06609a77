"""Value ≠ gradient: exact expected gradients of each KL option put into a loss.

``expected`` (per option, on a categorical policy), ``flow`` (where exact
gradient ascent with each option ends), ``demo`` (the Gradients page's toy setting).
"""
