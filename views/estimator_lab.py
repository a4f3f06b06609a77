"""Placeholder: the "Estimator Lab" page is being built (see issue 3)."""

import streamlit as st

st.title("Estimator Lab")
st.info("This page is being built.", icon=":material/construction:")
