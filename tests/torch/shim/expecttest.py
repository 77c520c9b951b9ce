"""A stand-in for the `expecttest` package (not packaged in Debian 12), which torch's internal test utilities import
for their TestCase base class. Only what the distributed suite reaches: inline expectations compared, never
rewritten."""

import unittest

# expecttest rewrites expectations in the source when EXPECTTEST_ACCEPT is set; this stand-in never does.
ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertEqual(str(actual).strip(), str(expect).strip())

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
        with self.assertRaises(exc_type) as raised:
            callable(*args, **kwargs)
        self.assertExpectedInline(str(raised.exception), expect)
