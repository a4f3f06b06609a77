"""Chart builders: kl_core results in, ``altair.Chart`` out.

Pure functions with no Streamlit import, so they can be tested, exported to
PNG/SVG and reused outside the app.  Colours come from :mod:`charts.palette`,
projector-friendly fonts from :func:`charts.palette.finish`.
"""
