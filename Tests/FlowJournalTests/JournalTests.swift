import Testing
@testable import FlowJournal
@Test func journalPlaceholder() {}
