// The test kit plugin authors use (LabTestKit) is part of every test's support.
@_exported public import LabTestKit
