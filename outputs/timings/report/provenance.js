// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "cc8e2c4c6145fe2a82c37a77374cdf595f9d4662",
  "dvc.lock sha256": "aa55e417d8b1355ce97c7dba2f7ab2e42a9222f1b55c93528401bb62bd42d798",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-02 02:42:18"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
