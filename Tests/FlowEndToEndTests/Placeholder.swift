import Testing
@Test func placeholderE2E() {}
