"""Placeholder: the "approx_kl in practice" page is being built (see issue 3)."""

import streamlit as st

st.title("approx_kl in practice")
st.info("This page is being built.", icon=":material/construction:")
