"""The .tir front end: Lark parse tree -> IR, with located diagnostics."""
