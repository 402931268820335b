"""AddressCredit (rmp/amplification.py): 3x what an address sent, and no more."""

from __future__ import annotations

from rmp.amplification import AMPLIFICATION, MAX_ADDRESSES, MAX_CREDIT, AddressCredit

HOST = ("10.0.0.5", 7000)


def test_an_address_may_get_three_times_what_it_sent() -> None:
    credit = AddressCredit()
    assert not credit.spend(HOST, 1)  # never heard: nothing
    credit.received(HOST, 100)
    assert credit.spend(HOST, 250) and not credit.spend(HOST, 51) and credit.spend(HOST, 50)
    assert not credit.spend(HOST, 1)
    assert AMPLIFICATION == 3


def test_credit_and_the_addresses_kept_are_bounded() -> None:
    credit = AddressCredit()
    for _ in range(1000):
        credit.received(HOST, 1400)
    assert credit.spend(HOST, MAX_CREDIT) and not credit.spend(HOST, 1)
    for index in range(MAX_ADDRESSES + 10):
        credit.received((f"10.1.{index // 256}.{index % 256}", 7000), 10)
    assert len(credit._credit) == MAX_ADDRESSES
    credit.received(("10.9.9.9", 7000), 0)
    assert not credit.spend(HOST, 1)  # the oldest forgotten
