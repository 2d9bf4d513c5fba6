// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "bd7f2fb5a6ab4977152c5cf2987f5715c33a8a75",
  "dvc.lock sha256": "b0dd2443e68b0c8adf4b21d9d37759490736e8e57f5f431c1cf04368848b2f4d",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-05 03:33:38"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
