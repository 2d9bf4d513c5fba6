import multiprocessing as mp

import pytest

from pipeline.runtime.store import ResumeStore


def test_put_get_and_checksum(tmp_path):
    with ResumeStore(tmp_path / "s.sqlite") as store:
        store.put("a", b"one")
        assert store.get("a") == b"one" and store.get("b") is None and store.keys() == {"a"}
        store._db.execute("UPDATE units SET checksum = 'x' WHERE key = 'a'")
        assert store.get("a") is None and store.keys() == set(), "a corrupt row is dropped"


def test_a_file_that_is_no_database_is_set_aside(tmp_path, capfd):
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with ResumeStore(path) as store:
        store.put("a", b"1")
        assert store.get("a") == b"1"
    assert (tmp_path / "s.sqlite.corrupt").read_bytes().startswith(b"this is not")
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a readable database" in err[0]


def _claim_and_exit(path, key, queue):
    queue.put(ResumeStore(path).claim(key))


def test_claims_of_live_and_dead_owners(tmp_path):
    path = tmp_path / "s.sqlite"
    store = ResumeStore(path)
    assert store.claim("k") and store.claim("k"), "a claim is held, and re-claimable by its owner"
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=_claim_and_exit, args=(path, "k", queue))
    p.start()
    assert queue.get(timeout=60) is False, "another live process cannot take it"
    p.join()
    store.release(["k"])
    p = ctx.Process(target=_claim_and_exit, args=(path, "k", queue))
    p.start()
    assert queue.get(timeout=60) is True
    p.join()
    assert store.claim("k"), "the claim of a process that died is taken over"
    store.put("k", b"v")
    assert not store.claim("k"), "a finished unit is not claimed"


def test_share_work_refuses_claimed_units_left_unrecorded(tmp_path):
    store = ResumeStore(tmp_path / "s.sqlite")
    with pytest.raises(RuntimeError, match="1 claimed units were not recorded"):
        store.share_work(["a"], lambda pending: store.claimed_here(pending), store.has)


def test_retain_drops_other_units(tmp_path):
    store = ResumeStore(tmp_path / "s.sqlite")
    for k in "abc":
        store.put(k, k.encode())
    assert store.retain(["a", "c"]) == 1 and store.keys() == {"a", "c"}
