"""Tests of observatory.kube against the in-process lab and small scripted HTTP servers."""
