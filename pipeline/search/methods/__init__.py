"""Search methods (TestNav §3.3, §4.2): TestNav/NSGA-II, its baselines, GP-PND and the anchors, each a `Method`."""
