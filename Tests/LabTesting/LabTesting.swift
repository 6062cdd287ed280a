// Test support shared by the test targets.
