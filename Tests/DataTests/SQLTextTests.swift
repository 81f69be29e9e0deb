import DataEngine
import TestSupport
import Testing

/// Identifiers are quoted for PostgreSQL whatever they hold.
@Suite(.tags(.fast)) struct SQLTextTests {
    @Test func identifiersAreDoubleQuotedWithEmbeddedQuotesDoubled() {
        #expect(SQL.quoted("Item") == #""Item""#)
        #expect(SQL.quoted(#"a"b""#) == #""a""b""""#)
        #expect(SQL.quoted(#"""#) == #""""""#)
        #expect(SQL.quoted("é\"ü") == "\"é\"\"ü\"")
    }
}
