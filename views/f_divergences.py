"""Placeholder: the "f-divergences & Fisher" page is being built (see issue 3)."""

import streamlit as st

st.title("f-divergences & Fisher")
st.info("This page is being built.", icon=":material/construction:")
