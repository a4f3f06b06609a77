"""Placeholder: the "Control variates" page is being built (see issue 3)."""

import streamlit as st

st.title("Control variates")
st.info("This page is being built.", icon=":material/construction:")
