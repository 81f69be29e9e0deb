import DataEngine
import InternalProtocol
import QueryLanguage
import Testing

/// Inputs `Fuzz/run.sh` found crashing the data engine, kept as tests.
@Suite struct FuzzRegressionTests {
    static let table = TableSchema(
        name: "T", columns: ColumnSchema.system + [ColumnSchema(name: "born", type: .datetime)])

    /// From 294,247 AD a date holds more microseconds since 1970 than 64 bits do: a real-time
    /// where clause naming one is refused (1017), where adding the epoch's offset trapped and
    /// took messaging-service down.
    @Test func realTimeClausesRefuseDatesBeyondSixtyFourBitMicroseconds() throws {
        let late = try QueryParser.condition("born = 9223775803775807")
        #expect(throws: ErrorEnvelope.self) { try ObjectPredicate(late, table: Self.table) }
        let stillCounted = try QueryParser.condition("born = 9223000000000000")
        #expect(throws: Never.self) { try ObjectPredicate(stillCounted, table: Self.table) }
    }
}
