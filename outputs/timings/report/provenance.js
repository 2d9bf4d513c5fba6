// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "952e5a4b27f68225fd6e4c6fd01c6d17e85c2a3d",
  "dvc.lock sha256": "e9883ac2e305709dba1548373aabbc56f9b4f8e69b68a7b8d487bc0b28b5c48e",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-04 21:20:38"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
