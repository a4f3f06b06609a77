"""Placeholder: the "Bregman gap" page is being built (see issue 3)."""

import streamlit as st

st.title("Bregman gap")
st.info("This page is being built.", icon=":material/construction:")
