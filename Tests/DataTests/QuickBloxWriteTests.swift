import DataEngine
import Permissions
import Testing

@testable import DataService

/// QuickBlox bodies read into the engine's changes, and its permissions into ACL cells and back,
/// without a database.
@Suite(.tags(.fast)) struct QuickBloxWriteTests {
    @Test func formAndJSONOperatorsBecomeTheSameEngineChanges() throws {
        let form = try QuickBloxWrite(form: [
            ("inc[rating]", "2"), ("push[tags][]", "a"), ("push[tags][]", "b"), ("pull[nums][gt]", "9"),
            ("pull_all[ids][]", "1"), ("pop[queue]", "-1"), ("add_to_set[set]", "x"), ("list[1]", "two"),
            ("name", "null"), ("_id", "abc"), ("created_at", "5"),
        ])
        let json = try QuickBloxWrite(
            json: try #require(
                try JSONParser.parse(
                    #"""
                    {"inc": {"rating": 2}, "push": {"tags": ["a", "b"]}, "pull": {"nums": {"gt": 9}},
                     "pull_all": {"ids": ["1"]}, "pop": {"queue": -1}, "add_to_set": {"set": "x"},
                     "list[1]": "two", "name": null, "_id": "abc", "created_at": 5}
                    """#
                ).object))
        #expect(form.id == "abc" && json.id == "abc")
        #expect(form.changes.members.map(\.key) == ["rating", "tags", "nums", "ids", "queue", "set", "list", "name"])
        #expect(form.changes == json.changes)
        #expect(form.changes["rating"]?.object?["___operation"] == .string("INCREMENT"))
        #expect(form.changes["rating"]?.object?["args"] == .integer(2))
        #expect(form.changes["tags"]?.object?["args"] == .array([.string("a"), .string("b")]))
        #expect(form.changes["nums"]?.object?["operator"] == .string("gt"))
        #expect(form.changes["queue"]?.object?["args"] == .integer(-1))
        #expect(form.changes["list"]?.object?["args"] == .object(JSONObject([("$[1]", .string("two"))])))
        #expect(form.changes["name"] == .null)
    }

    @Test func malformedKeysAndClashingOperatorsAreRefused() {
        for pairs: [(String, String)] in [
            [("inc[n", "1")], [("pop[q]", "2")], [("inc[n]", "x")], [("push[t]", "1"), ("pull[t]", "1")],
            [("n", "1"), ("inc[n]", "1")], [("[n]", "1")], [("permissions[read][access]", "all")],
        ] {
            #expect(throws: (any Error).self, "\(pairs)") { try QuickBloxWrite(form: pairs) }
        }
    }

    @Test func permissionsBecomeACLCellsAndReadBackTheSame() throws {
        let owner = "owner-1"
        let cases: [QuickBloxPermissions.Access] = [
            .open, .owner, .notAllowed, .users(["u-2", "u-3"]), .groups(["golf", "man"]),
        ]
        for access in cases {
            let cells = QuickBloxPermissions.cells(access, operation: .update, owner: owner)
            let stored = cells.map { cell -> JSONValue in
                let (kind, name) = cell.principal.parts
                return .object(
                    JSONObject([
                        (kind, .string(name)), ("permission", .string(cell.operation.permissionName)),
                        ("access", .string(cell.decision?.rawValue ?? "")),
                    ]))
            }
            let read = QuickBloxPermissions(cells: stored, owner: owner)
            #expect(read.access[.update] == access, "\(access)")
            #expect(read.access[.find] == .open, "an operation without cells follows the table's rules")
        }
        #expect(
            QuickBloxPermissions.cells(.owner, operation: .remove, owner: owner).contains {
                $0.principal == .user(owner)
            })
        #expect(QuickBloxPermissions.cells(.owner, operation: .remove, owner: nil).count == 1)
    }
}
