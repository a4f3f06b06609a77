"""The lessons: ``catalog`` (seven lessons as data), ``quantities`` (what a question
asks for, computed by kl_core) and ``quiz`` (Moodle XML, GIFT and JSON).
"""
