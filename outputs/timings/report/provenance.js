// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "8d3ff243275ad5dee40a4863da2d9318e8e208e2",
  "dvc.lock sha256": "4a5f39a66e39cbe505ceb5136226ab311033b0e473776a0ae747e896cc8c933d",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-01 18:10:30"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
