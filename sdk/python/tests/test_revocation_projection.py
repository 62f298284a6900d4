"""The projection as the Node one behaves: max() of each part, cuts by iat, forgetting."""
import unittest

import package_under_test  # noqa: F401 (chooses the package imported below)
from tessera_verification import RevocationProjection


class Projection(unittest.TestCase):
    def test_rotation_keeps_the_highest_generation_in_any_order(self):
        projection = RevocationProjection()
        projection.rotate_family("fam", 3, 1000)
        projection.rotate_family("fam", 1, 1000)
        self.assertTrue(projection.is_rejected("fam", 2))
        self.assertFalse(projection.is_rejected("fam", 3))
        self.assertFalse(projection.is_rejected("other", 0))

    def test_a_revocation_rejects_every_generation(self):
        projection = RevocationProjection()
        projection.rotate_family("fam", 2, 1000)
        projection.revoke_family("fam", 1000)
        self.assertTrue(projection.is_rejected("fam", 5))

    def test_cuts_reject_tokens_issued_before_not_before(self):
        projection = RevocationProjection()
        projection.cut_account("acc", 100, 1000)
        projection.cut_credential("tsl_x", 200, 1000)
        self.assertTrue(projection.is_cut_off("acc", "tsl_y", 99))
        self.assertFalse(projection.is_cut_off("acc", "tsl_y", 100))
        self.assertTrue(projection.is_cut_off("acc2", "tsl_x", 199))
        self.assertFalse(projection.is_cut_off("acc2", "tsl_x", 200))

    def test_forgets_an_entry_once_its_tokens_have_expired_plus_skew(self):
        projection = RevocationProjection(clock_skew_seconds=60)
        projection.revoke_family("fam", 1000)
        projection.cut_account("acc", 100, 2000)
        self.assertEqual(projection.forget_expired(1059), 0)
        self.assertEqual(projection.forget_expired(1060), 1)
        self.assertFalse(projection.is_rejected("fam", 0))
        self.assertTrue(projection.is_cut_off("acc", "c", 50))
        # Something that can only reject expired tokens is not stored at all.
        projection.revoke_family("old", 900)
        self.assertFalse(projection.is_rejected("old", 0))


if __name__ == "__main__":
    unittest.main()
