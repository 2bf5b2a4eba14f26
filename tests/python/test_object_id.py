"""rplasma.ObjectID and the exception hierarchy: no store needed."""

import pickle

import pytest

import rplasma


def test_hex_and_bytes_round_trip():
    oid = rplasma.ObjectID.random()
    assert len(oid.binary()) == 20
    assert rplasma.ObjectID.from_hex(oid.hex()) == oid
    assert rplasma.ObjectID(bytes(oid)) == oid
    assert str(oid) == oid.hex() and len(oid.hex()) == 40
    assert repr(oid) == f"ObjectID('{oid.hex()}')"


def test_label_ids_are_deterministic_and_distinct():
    assert rplasma.ObjectID.from_label("a") == rplasma.ObjectID.from_label("a")
    assert rplasma.ObjectID.from_label("a") != rplasma.ObjectID.from_label("b")


def test_ids_hash_and_order_by_value():
    a = rplasma.ObjectID(b"\x01" * 20)
    b = rplasma.ObjectID(b"\x02" * 20)
    assert {a, rplasma.ObjectID(b"\x01" * 20), b} == {a, b}
    assert hash(a) == hash(rplasma.ObjectID(bytes(a)))
    assert a < b and b > a and a <= a and a != b
    assert sorted([b, a]) == [a, b]


def test_ids_pickle():
    oid = rplasma.ObjectID.random()
    assert pickle.loads(pickle.dumps(oid)) == oid


@pytest.mark.parametrize("bad", [b"", b"\x00" * 19, b"\x00" * 21])
def test_wrong_length_binary_is_invalid_argument(bad):
    with pytest.raises(rplasma.InvalidArgument):
        rplasma.ObjectID(bad)


@pytest.mark.parametrize("bad", ["", "zz" * 20, "ab" * 19])
def test_bad_hex_is_invalid_argument_and_value_error(bad):
    with pytest.raises(ValueError):
        rplasma.ObjectID.from_hex(bad)


def test_one_exception_class_per_error_code():
    names = ["ObjectExists", "ObjectNotFound", "ObjectNotSealed", "ObjectAlreadySealed", "ObjectInUse",
             "OutOfMemory", "DeadlineExceeded", "InvalidArgument", "NotCreator", "ProtocolError", "Unavailable",
             "Internal", "PermissionDenied", "StaleObject"]
    codes = []
    for name in names:
        cls = getattr(rplasma, name)
        assert issubclass(cls, rplasma.Error) and cls is not rplasma.Error
        assert cls.__name__ == name
        codes.append(cls.code)
    assert codes == list(range(1, len(names) + 1))  # the ErrorCode values, in order
    assert rplasma.Timeout is rplasma.DeadlineExceeded
    assert issubclass(rplasma.DeadlineExceeded, TimeoutError)
    assert issubclass(rplasma.InvalidArgument, ValueError)
