import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing

/// ADD_RELATION, SET_RELATION and DELETE_RELATION in units of work: ids, references to earlier
/// results (an object, a bulk create's ids, a FIND's objects, by index or whole), conditions, and
/// a rollback of everything when a later operation fails.
@Suite(.timeLimit(.minutes(20))) struct RelationUnitOfWorkTests {
    private func run(_ fixture: EngineFixture, _ operations: String) async throws -> [String: Any] {
        let work = try UnitOfWork(body: try JSONParser.parse(#"{"operations": [\#(operations)]}"#))
        return try fixture.decode(
            try await fixture.engine.execute(work, identity: fixture.rest, logger: fixture.logger).jsonText)
    }

    private func result(_ envelope: [String: Any], _ id: String) -> Any? {
        ((envelope["results"] as? [String: Any])?[id] as? [String: Any])?["result"]
    }

    /// A Person `Ann` with a declared 1:N `friends` to Person, and its id.
    private func ann(_ fixture: EngineFixture) async throws -> String {
        let ann = try await fixture.objects("Person", ["Ann"])[0]
        _ = try await fixture.change(.set, "Person", ann, try RelationColumnArgument("friends:Person:n"), .ids([]))
        return ann
    }

    @Test func relationOperationsTakeIdsReferencesAndConditions() async throws {
        try await EngineFixture.with { fixture in
            let ann = try await ann(fixture)
            let envelope = try await run(
                fixture,
                #"""
                {"operationType": "CREATE", "table": "Person", "opResultId": "bob", "payload": {"name": "Bob"}},
                {"operationType": "CREATE_BULK", "table": "Person", "opResultId": "many", "payload": [{"name": "Cy"}, {"name": "Di"}]},
                {"operationType": "ADD_RELATION", "table": "Person", "opResultId": "addBob", "payload": {
                  "parentObject": "\#(ann)", "relationColumn": "friends", "unconditional": {"___ref": true, "opResultId": "bob"}}},
                {"operationType": "ADD_RELATION", "table": "Person", "opResultId": "addMany", "payload": {
                  "parentObject": {"objectId": "\#(ann)"}, "relationColumn": "friends", "unconditional": {"___ref": true, "opResultId": "many"}}},
                {"operationType": "FIND", "table": "Person", "opResultId": "found", "payload": {"whereClause": "name IN ('Cy', 'Di')"}},
                {"operationType": "DELETE_RELATION", "table": "Person", "opResultId": "dropFound", "payload": {
                  "parentObject": "\#(ann)", "relationColumn": "friends", "unconditional": {"___ref": true, "opResultId": "found"}}},
                {"operationType": "SET_RELATION", "table": "Person", "opResultId": "setCy", "payload": {
                  "parentObject": {"___ref": true, "opResultId": "bob", "propName": "objectId"}, "relationColumn": "friends",
                  "conditional": "name = 'Cy'"}},
                {"operationType": "ADD_RELATION", "table": "Person", "opResultId": "addDi", "payload": {
                  "parentObject": "\#(ann)", "relationColumn": "friends",
                  "unconditional": [{"___ref": true, "opResultId": "many", "resultIndex": 1}]}}
                """#)
            #expect(envelope["success"] as? Bool == true, "\(envelope)")
            let counts = ["addBob", "addMany", "dropFound", "setCy", "addDi"].map { result(envelope, $0) as? Int }
            #expect(counts == [1, 2, 2, 1, 1])
            #expect(try await fixture.children("Person", ann, "friends") == ["Bob", "Di"])
            let bob = try #require(
                try await fixture.find("Person", [("where", "name = 'Bob'")]).first?["objectId"] as? String)
            #expect(try await fixture.children("Person", bob, "friends") == ["Cy"])
        }
    }

    @Test func aFailureLaterRollsBackTheLinksAndTheObjects() async throws {
        try await EngineFixture.with { fixture in
            let ann = try await ann(fixture)
            let failing = [
                #"{"operationType": "DELETE", "table": "Person", "payload": "missing"}"#,
                #"{"operationType": "ADD_RELATION", "table": "Person", "payload": {"parentObject": "\#(ann)", "relationColumn": "enemies", "unconditional": []}}"#,
                #"{"operationType": "ADD_RELATION", "table": "Person", "payload": {"parentObject": "nobody", "relationColumn": "friends", "unconditional": []}}"#,
            ]
            for (failure, code) in zip(failing, [1000, 1011, 1000]) {
                let envelope = try await run(
                    fixture,
                    #"""
                    {"operationType": "CREATE", "table": "Person", "opResultId": "bob", "payload": {"name": "Bob"}},
                    {"operationType": "ADD_RELATION", "table": "Person", "payload": {
                      "parentObject": "\#(ann)", "relationColumn": "friends", "unconditional": [{"___ref": true, "opResultId": "bob"}]}},
                    \#(failure)
                    """#)
                #expect(envelope["success"] as? Bool == false)
                #expect((envelope["error"] as? [String: Any])?["code"] as? Int == code, "\(envelope)")
                #expect(try await fixture.rowCount("Person") == 1)
                #expect(try await fixture.linkCount("Person", "friends") == 0)
            }
        }
    }
}
