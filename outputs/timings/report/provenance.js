// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "beac5084994b3cf17302b101b7afc1aa0ffbda3e",
  "dvc.lock sha256": "5971d81c9c622630cdcb186aa399c160544c425cf63ea78dd1fd291ca28d1488",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-02 01:03:20"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
