// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "2088c3a1f1c87a93fd1acd2d14437768a6d4ce0d",
  "dvc.lock sha256": "b2f709a9d6f7b193623686656b06c8f37ff4d71c957fa27e70024076c1b200bb",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-02 00:22:10"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
