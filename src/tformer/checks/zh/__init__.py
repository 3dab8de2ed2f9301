"""Chinese catalogues of the checkers' messages, one module per checker module.

``tformer.checks.zh.chNN.MESSAGES`` maps each English message template of
``tformer/checks/chNN.py`` (as :mod:`tformer.checks.catalogue` reads it from the source) to its
Chinese template; ``{0}``, ``{1}`` … are the English template's holes in their English order.
``WORDS`` (in :mod:`tformer.checks.zh.core`) translates single words that arrive as values, such
as axis names. ``python -m tformer.checks.catalogue`` lists what is untranslated or stale.
"""
