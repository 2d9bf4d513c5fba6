// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "83578a9185e163290b8514b70bc98cc41ed5a00f",
  "dvc.lock sha256": "1c96523e5b8a60d2289a470a78f64e1b8c52924e9e6c973002f97f962a01814f",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-02 02:23:28"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
