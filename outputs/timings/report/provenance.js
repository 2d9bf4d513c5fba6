// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is
// the same bytes on every machine and run (pipeline/report/provenance.py).
(function () {
  var run = {
  "git commit": "15968f3996e6952f12104a4510bd459138d37459",
  "dvc.lock sha256": "e3beadd4a834078b2b63119462a314ba32fcd29f0b2d8a392e056c011de9a882",
  "python": "3.11.7",
  "machine": "Linux-6.18.44-fc-v1098-x86_64-with-glibc2.36",
  "processor": "x86_64",
  "cpu count": "2",
  "built at (UTC)": "2026-12-03 13:20:02"
};
  var list = document.getElementById('run-provenance');
  Object.keys(run).forEach(function (key) {
    var term = document.createElement('dt'), value = document.createElement('dd');
    term.textContent = key; value.textContent = run[key];
    list.appendChild(term); list.appendChild(value);
  });
})();
