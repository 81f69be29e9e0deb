import DataEngine
import Foundation
import InternalProtocol
import NIOHTTP1
import PostgresNIO
import TestSupport
import Testing

/// No client response carries PostgreSQL's own text: refusals it raises answer with a code and a
/// message this project wrote.
@Suite(.timeLimit(.minutes(20))) struct RedactionTests {
    /// Phrases only PostgreSQL's messages and details contain.
    static let databaseText = [
        "Key (", "already exists.", "violates check", "violates unique", "violates foreign", "new row for relation",
        "does not exist", "function sum(", "operator does not exist", "ERROR",
        "SQLSTATE", "deadlock detected", "check constraint", "positive_n", "Process ",
    ]

    /// Runs SQL on the cluster's database, as the app's owner.
    private func sql(_ cluster: TestCluster, _ statement: String) async throws {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger).collect()
        }
    }

    /// Every phrase of PostgreSQL's own absent from `text`.
    private func expectNoDatabaseText(_ text: String, _ what: String) {
        for phrase in Self.databaseText { #expect(!text.contains(phrase), "\(what) leaks '\(phrase)': \(text)") }
    }

    @Test func checkViolationsAndDeadlocksAnswerWithOurOwnWords() async throws {
        try await TestCluster.with { cluster async throws in
            var ids: [String] = []
            for name in ["a", "b"] {
                let created = try await cluster.send(.POST, "/data/Item", #"{"name": "\#(name)", "n": 1}"#)
                ids.append(try #require(created.json["objectId"] as? String, "\(created.text)"))
            }
            let table = "\(AppCatalog.schemaName(for: cluster.app.id)).\"Item\""
            try await sql(cluster, "ALTER TABLE \(table) ADD CONSTRAINT positive_n CHECK (n > 0)")
            let refused = try await cluster.send(.PUT, "/data/Item/\(ids[0])", #"{"n": -1}"#)
            #expect(refused.status == 409 && refused.json["code"] as? Int == 1015, "\(refused.text)")
            expectNoDatabaseText(refused.text, "check violation")

            // Each unit of work locks its first row, then waits (at most 60 s) until the other has
            // locked its own, so the two always deadlock whatever the machine's pace.
            try await sql(cluster, "CREATE SEQUENCE public.redaction_barrier")
            try await sql(
                cluster,
                """
                CREATE FUNCTION public.redaction_meet() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF current_setting('redaction.met', true) IS DISTINCT FROM 'yes' THEN
                    PERFORM set_config('redaction.met', 'yes', true);
                    PERFORM nextval('public.redaction_barrier');
                    FOR i IN 1..1200 LOOP
                      EXIT WHEN (SELECT last_value FROM public.redaction_barrier) >= 2;
                      PERFORM pg_sleep(0.05);
                    END LOOP;
                  END IF;
                  RETURN NEW;
                END $$
                """)
            try await sql(
                cluster,
                "CREATE TRIGGER meet BEFORE UPDATE ON \(table) FOR EACH ROW EXECUTE FUNCTION public.redaction_meet()")
            func work(_ first: String, _ second: String) -> String {
                #"{"operations": [{"operationType": "UPDATE", "table": "Item", "payload": {"objectId": "\#(first)", "n": 2}},"#
                    + #" {"operationType": "UPDATE", "table": "Item", "payload": {"objectId": "\#(second)", "n": 3}}]}"#
            }
            let (forward, backward) = (work(ids[0], ids[1]), work(ids[1], ids[0]))
            async let one = cluster.send(.POST, "/transaction/unit-of-work", forward)
            async let two = cluster.send(.POST, "/transaction/unit-of-work", backward)
            let answers = try await [one, two]
            let codes = answers.map { ($0.json["error"] as? [String: Any])?["code"] as? Int ?? $0.json["code"] as? Int }
            #expect(codes.contains(1026), "\(answers.map(\.text))")
            for answer in answers { expectNoDatabaseText(answer.text, "deadlock") }
        }
    }

    @Test func databaseRefusalsAnswerWithOurOwnWords() async throws {
        try await TestCluster.with { cluster async throws in
            let created = try await cluster.send(.POST, "/data/Item", #"{"name": "a", "n": 1}"#)
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")
            let refusals: [(HTTPMethod, String, String?, Int)] = [
                (.POST, "/data/Item", #"{"objectId": "\#(id)", "name": "b"}"#, 1025),
                (.GET, "/data/Item?props=Sum(name)", nil, 1017),
                (.GET, "/data/Item?where=n%20%2F%200%20%3D%201", nil, 1017),
                (.GET, "/data/Item?sortBy=-name", nil, 1017),
            ]
            for (method, path, body, code) in refusals {
                let answer = try await cluster.send(method, path, body)
                #expect((400..<500).contains(answer.status), "\(path): \(answer.text)")
                #expect(answer.json["code"] as? Int == code, "\(path): \(answer.text)")
                expectNoDatabaseText(answer.text, path)
            }
        }
    }
}
