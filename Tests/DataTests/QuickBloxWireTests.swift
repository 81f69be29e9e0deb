import Foundation
import InternalProtocol
import NIOHTTP1
import ServiceRuntime
import TestSupport
import Testing

/// QuickBlox's custom-objects REST API under `quickblox/`, sent as its SDKs send it (S3 lines
/// 148–455 and QuickBlox's REST reference): JSON and form bodies, its update operators, its
/// permissions, its multi-record calls and its answers (`_id`, `user_id`, `created_at`…).
@Suite(.timeLimit(.minutes(20))) struct QuickBloxWireTests {
    /// A request with a form body (`application/x-www-form-urlencoded`), as the iOS SDK sends it.
    private func form(
        _ cluster: TestCluster, _ method: HTTPMethod, _ path: String, _ body: String, token: String? = nil
    ) async throws -> HTTPResult {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let token { headers.append(("user-token", token)) }
        return try await HTTPTestClient.send(
            method, cluster.gatewayURL + cluster.prefix(.rest) + path, headers: headers, body: Data(body.utf8))
    }

    private func items(_ result: HTTPResult) throws -> [[String: any Sendable]] {
        try #require(result.json["items"] as? [[String: any Sendable]], "\(result.status) \(result.text)")
    }

    private func ids(_ result: HTTPResult, _ key: String) -> [String] {
        (result.json[key] as? [String: any Sendable])?["ids"] as? [String] ?? []
    }

    @Test func aRecordCarriesQuickBloxFieldsOperatorsAndPermissions() async throws {
        try await TestCluster.shared { cluster async throws in
            let owner = try await cluster.account("qb-owner@example.com")
            let editor = try await cluster.account("qb-editor@example.com")
            let body = #"""
                {"name": "Star Wars", "rating": 5, "tags": ["a", "b", "c"], "nums": [1, 5, 10, 20],
                 "set": ["x"], "list": ["one", "x"],
                 "permissions": {"read": {"access": "open"},
                                 "update": {"access": "open_for_users_ids", "ids": ["\#(editor.id)"]},
                                 "delete": {"access": "owner"}}}
                """#
            let created = try await cluster.send(.POST, "/quickblox/data/Movie.json", body, token: owner.token)
            #expect(created.status == 200, "\(created.text)")
            let id = try #require(created.json["_id"] as? String)
            #expect(created.json["user_id"] as? String == owner.id)
            #expect(
                created.json["objectId"] == nil && created.json["___class"] == nil && created.json["created"] == nil)
            let createdAt = try #require(created.json["created_at"] as? Int)
            #expect(createdAt > 1_700_000_000 && createdAt < 10_000_000_000, "epoch seconds, not milliseconds")
            #expect(created.json["updated_at"] as? Int == createdAt)
            #expect(created.json.keys.contains("_parent_id"))
            let echoed = created.json["permissions"] as? [String: any Sendable]
            #expect((echoed?["update"] as? [String: any Sendable])?["ids"] as? [String] == [editor.id])

            // The iOS SDK's special update operators, as a form, by a user the record opens updates to.
            let path = "/quickblox/data/Movie/\(id).json"
            let operators =
                "inc[rating]=2&push[tags][]=d&push[tags][]=e&pull[nums][gt]=9&add_to_set[set]=x"
                + "&add_to_set[set]=y&list[1]=two&name=null"
            let updated = try await form(cluster, .PUT, path, operators, token: editor.token)
            #expect(updated.status == 200, "\(updated.text)")
            #expect(updated.json["rating"] as? Int == 7)
            #expect(updated.json["tags"] as? [String] == ["a", "b", "c", "d", "e"])
            #expect(updated.json["nums"] as? [Int] == [1, 5])
            #expect(updated.json["set"] as? [String] == ["x", "y"])
            #expect(updated.json["list"] as? [String] == ["one", "two"])
            #expect(updated.json["name"] is NSNull)
            // The JS SDK's JSON form of the same operators.
            let json = try await cluster.send(
                .PUT, path, #"{"_id": "\#(id)", "pop": {"tags": -1}, "pull_all": {"nums": [1]}, "pull": {"set": "x"}}"#,
                token: owner.token)
            #expect(json.json["tags"] as? [String] == ["b", "c", "d", "e"], "\(json.text)")
            #expect(json.json["nums"] as? [Int] == [5] && json.json["set"] as? [String] == ["y"])

            // Someone the record does not open updates to is refused; nothing changed.
            let stranger = try await cluster.account("qb-stranger@example.com")
            let refused = try await cluster.send(.PUT, path, #"{"inc": {"rating": 100}}"#, token: stranger.token)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(refused.text)")
            let anonymous = try await cluster.send(.PUT, path, #"{"rating": 0}"#)
            #expect(anonymous.status == 403 && anonymous.json["code"] as? Int == 1023)

            let permissions = try await cluster.send(.GET, path + "?permissions=1", token: owner.token)
            let read = try #require(permissions.json["permissions"] as? [String: any Sendable], "\(permissions.text)")
            #expect((read["read"] as? [String: any Sendable])?["access"] as? String == "open")
            let update = read["update"] as? [String: any Sendable]
            #expect(update?["access"] as? String == "open_for_users_ids" && update?["ids"] as? [String] == [editor.id])
            #expect((read["delete"] as? [String: any Sendable])?["access"] as? String == "owner")
            #expect(permissions.json["record_id"] as? String == id)

            // Permissions change with an update: now only members of a group (a role) may update.
            let regroup = try await cluster.send(
                .PUT, path, #"{"permissions": {"update": {"access": "open_for_groups", "groups": "golf,man"}}}"#,
                token: owner.token)
            #expect(regroup.status == 200, "\(regroup.text)")
            let byEditor = try await cluster.send(.PUT, path, #"{"rating": 1}"#, token: editor.token)
            #expect(byEditor.status == 403, "the editor holds neither role: \(byEditor.text)")
            let regrouped = try await cluster.send(.GET, path + "?permissions=1", token: owner.token)
            let groups =
                (regrouped.json["permissions"] as? [String: any Sendable])?["update"] as? [String: any Sendable]
            #expect(
                groups?["access"] as? String == "open_for_groups" && groups?["groups"] as? [String] == ["golf", "man"])
            #expect(try await cluster.send(.PUT, path, #"{"rating": 1}"#, token: owner.token).status == 200)

            let deniedDelete = try await cluster.send(.DELETE, path, token: editor.token)
            #expect(deniedDelete.status == 403 && deniedDelete.json["code"] as? Int == 1023)
            let deleted = try await cluster.send(.DELETE, path, token: owner.token)
            #expect(deleted.status == 200 && self.ids(deleted, "SuccessfullyDeleted") == [id], "\(deleted.text)")
            #expect(try await cluster.send(.DELETE, path, token: owner.token).json["code"] as? Int == 1000)
        }
    }

    @Test func notAllowedLeavesOnlyTheOwnerAndReadsBackAsSuch() async throws {
        try await TestCluster.shared { cluster async throws in
            let owner = try await cluster.account("qb-na-owner@example.com")
            let other = try await cluster.account("qb-na-other@example.com")
            let created = try await form(
                cluster, .POST, "/quickblox/data/Secret.json",
                "text=hidden&permissions[read][access]=not_allowed", token: owner.token)
            let id = try #require(created.json["_id"] as? String, "\(created.text)")
            let list = try await cluster.send(.GET, "/quickblox/data/Secret.json", token: other.token)
            #expect(try items(list).isEmpty)
            #expect(
                try items(try await cluster.send(.GET, "/quickblox/data/Secret.json", token: owner.token)).count == 1)
            let read = try await cluster.send(
                .GET, "/quickblox/data/Secret/\(id).json?permissions=1", token: owner.token)
            let access = (read.json["permissions"] as? [String: any Sendable])?["read"] as? [String: any Sendable]
            #expect(access?["access"] as? String == "not_allowed", "\(read.text)")
            let unknown = try await cluster.send(
                .POST, "/quickblox/data/Secret.json", #"{"permissions": {"read": {"access": "everyone"}}}"#,
                token: owner.token)
            #expect(unknown.status == 400 && unknown.json["code"] as? Int == 1022)
            let create = try await cluster.send(
                .POST, "/quickblox/data/Secret.json", #"{"permissions": {"create": {"access": "open"}}}"#,
                token: owner.token)
            #expect(create.status == 400 && create.json["code"] as? Int == 1022, "CREATE is not set per record")
            #expect(
                try items(try await cluster.send(.GET, "/quickblox/data/Secret.json", token: owner.token)).count == 1)
        }
    }

    @Test func manyRecordsAnswerAsQuickBloxDoes() async throws {
        try await TestCluster.shared { cluster async throws in
            let owner = try await cluster.account("qb-many-owner@example.com")
            let other = try await cluster.account("qb-many-other@example.com")
            _ = try await cluster.send(.POST, "/quickblox/data/Score.json", #"{"rating": 1, "tag": "seed"}"#)
            let created = try await cluster.send(
                .POST, "/quickblox/data/Score/multi.json",
                #"{"record": {"1": {"rating": "2049124"}, "2": {"rating": 12}}}"#, token: owner.token)
            let records = try items(created)
            #expect(records.map { $0["rating"] as? Int } == [2_049_124, 12], "\(created.text)")
            #expect(created.json["class_name"] as? String == "Score")
            let ids = records.compactMap { $0["_id"] as? String }
            #expect(ids.count == 2 && records.allSatisfy { $0["user_id"] as? String == owner.id })

            let bogus = "5228ad042195be5d8d41bd9a33"
            let updated = try await cluster.send(
                .PUT, "/quickblox/data/Score/multi.json",
                #"{"record": {"1": {"_id": "\#(ids[0])", "rating": 101}, "2": {"id": "\#(ids[1])", "rating": "201"}, "3": {"_id": "\#(bogus)", "rating": 31}}}"#,
                token: owner.token)
            #expect(try items(updated).map { $0["rating"] as? Int } == [101, 201], "\(updated.text)")
            #expect(self.ids(updated, "not_found") == [bogus])
            let byForm = try await form(
                cluster, .PUT, "/quickblox/data/Score/multi.json",
                "record[1][_id]=\(ids[0])&record[1][inc][rating]=-1", token: owner.token)
            #expect(try items(byForm).first?["rating"] as? Int == 100, "\(byForm.text)")

            let closed = try await cluster.send(
                .POST, "/quickblox/data/Score.json",
                #"{"rating": 7, "permissions": {"delete": {"access": "owner"}, "update": {"access": "owner"}}}"#,
                token: owner.token)
            let closedID = try #require(closed.json["_id"] as? String, "\(closed.text)")
            let notMine = try await cluster.send(
                .PUT, "/quickblox/data/Score/multi.json",
                #"{"record": {"1": {"_id": "\#(closedID)", "rating": 0}, "2": {"_id": "\#(ids[1])", "rating": 202}}}"#,
                token: other.token)
            #expect(self.ids(notMine, "not_found") == [closedID], "\(notMine.text)")
            #expect(try items(notMine).map { $0["rating"] as? Int } == [202])

            let deleted = try await cluster.send(
                .DELETE, "/quickblox/data/Score/\(ids[0]),\(closedID),\(bogus).json", token: other.token)
            #expect(self.ids(deleted, "SuccessfullyDeleted") == [ids[0]], "\(deleted.text)")
            #expect(self.ids(deleted, "NotFound") == [bogus])
            #expect(self.ids(deleted, "WrongPermissions") == [closedID])
            let left = try await cluster.send(.GET, "/quickblox/data/Score/\(ids[0]),\(closedID).json")
            #expect(try items(left).compactMap { $0["_id"] as? String } == [closedID])

            let tooMany = (1...101).map { #""\#($0)": {"rating": \#($0)}"# }.joined(separator: ",")
            let refused = try await cluster.send(
                .POST, "/quickblox/data/Score/multi.json", #"{"record": {\#(tooMany)}}"#)
            #expect(refused.status == 400 && refused.json["code"] as? Int == 1021)
            let twice = try await cluster.send(
                .PUT, "/quickblox/data/Score/multi.json",
                #"{"record": {"1": {"_id": "\#(ids[1])", "rating": 1}, "2": {"_id": "\#(ids[1])", "rating": 2}}}"#)
            #expect(twice.status == 400 && twice.json["code"] as? Int == 1022)
            #expect(try await cluster.send(.PUT, "/quickblox/data/Score/multi.json", #"{"rows": []}"#).status == 400)
        }
    }

    @Test func listsPageUpToAThousandCountAndChooseFields() async throws {
        try await TestCluster.shared { cluster async throws in
            for batch in 0..<2 {
                let objects = (0..<75).map { #"{"n": \#(batch * 75 + $0), "name": "item"}"# }.joined(separator: ",")
                #expect(try await cluster.send(.POST, "/data/bulk/Item", "[\(objects)]").status == 200)
            }
            let all = try await cluster.send(.GET, "/quickblox/data/Item.json?limit=1000&sort_asc=n")
            #expect(try items(all).count == 150 && all.json["limit"] as? Int == 1000, "\(all.status)")
            #expect(try items(all).first?["n"] as? Int == 0)
            let page = try await cluster.send(
                .GET, "/quickblox/data/Item.json?n%5Bgte%5D=100&sort_desc=n&skip=10&limit=5")
            #expect(try items(page).map { $0["n"] as? Int } == [139, 138, 137, 136, 135])
            let count = try await cluster.send(.GET, "/quickblox/data/Item.json?n%5Blt%5D=10&count=1")
            #expect(count.json["items_count"] as? Int == 10 && count.json["class_name"] as? String == "Item")
            let included = try items(
                try await cluster.send(.GET, "/quickblox/data/Item.json?limit=1&output%5Binclude%5D=n"))
            #expect(Set(included.first?.keys.map { $0 } ?? []) == ["_id", "n"])
            let excluded = try items(
                try await cluster.send(.GET, "/quickblox/data/Item.json?limit=1&output%5Bexclude%5D=_id,name"))
            #expect(excluded.first?["_id"] == nil && excluded.first?["name"] == nil && excluded.first?["n"] != nil)
            for limit in ["0", "1001", "-2", "x"] {
                let refused = try await cluster.send(.GET, "/quickblox/data/Item.json?limit=\(limit)")
                #expect(refused.status == 400 && [1016, 1017].contains(refused.json["code"] as? Int), "\(limit)")
            }
            // The older filter route under data/ pages up to a thousand too.
            let filter = try await cluster.send(.GET, "/data/Item/filter?limit=1000")
            #expect((filter.json["items"] as? [Any])?.count == 150)
            // -1 answers the record created last (the bulk rows share their creation time).
            _ = try await cluster.send(.POST, "/quickblox/data/Item.json", #"{"n": 999}"#)
            let last = try await cluster.send(.GET, "/quickblox/data/Item.json?limit=-1")
            #expect(try items(last).map { $0["n"] as? Int } == [999] && last.json["limit"] as? Int == 1)
        }
    }

    /// A create or update that adds columns is checked before the column is added: a caller who
    /// may not write the row leaves the table's schema as it was (the Users table included).
    /// `_parent_id` names the parent object: a record that would make its column of another
    /// type than text is refused, as records answer it as a string or null.
    @Test func aParentIDIsText() async throws {
        try await TestCluster.shared { cluster async throws in
            for value in [#"{"a": 1}"#, "[1]", "5", "true"] {
                let refused = try await cluster.send(
                    .POST, "/quickblox/data/Parented.json", #"{"_parent_id": \#(value)}"#, key: .serverCode)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 1012, "\(value): \(refused.text)")
            }
            let child = try await cluster.send(
                .POST, "/quickblox/data/Parented.json", #"{"_parent_id": "parent-1"}"#, key: .serverCode)
            #expect(child.status == 200 && child.json["_parent_id"] as? String == "parent-1", "\(child.text)")
        }
    }

    @Test func aRefusedWriteAddsNoColumn() async throws {
        try await TestCluster.shared { cluster async throws in
            let owner = try await cluster.account("qb-schema-owner@example.com")
            let stranger = try await cluster.account("qb-schema-stranger@example.com")
            let created = try await cluster.send(
                .POST, "/quickblox/data/Guarded.json",
                #"{"n": 1, "permissions": {"update": {"access": "owner"}}}"#, token: owner.token)
            let id = try #require(created.json["_id"] as? String, "\(created.text)")
            let open = #""permissions": {"read": {"access": "open"}}"#
            let refused = try await cluster.send(
                .PUT, "/quickblox/data/Guarded/\(id).json", #"{"sneaky": 1, \#(open)}"#, token: stranger.token)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(refused.text)")
            let missing = try await cluster.send(
                .PUT, "/quickblox/data/Guarded/nope.json", #"{"sneaky": 1, \#(open)}"#, token: stranger.token)
            #expect(missing.json["code"] as? Int == 1000, "\(missing.text)")
            let users = try await cluster.send(.POST, "/quickblox/data/Users.json", #"{"sneaky": 1, \#(open)}"#)
            #expect(users.status == 403 || users.status == 400, "\(users.text)")
            for table in ["Guarded", "Users"] {
                let columns = try await cluster.send(.GET, "/data/\(table)/properties", key: .serverCode).items
                #expect(!columns.contains { $0["name"] as? String == "sneaky" }, "\(table)")
            }
        }
    }

    /// Forms are bounded as JSON bodies are: fields, records and index writes.
    @Test func formsAreBounded() async throws {
        try await TestCluster.shared { cluster async throws in
            let fields = (0...PublicCall.maximumPairs).map { "f\($0)=1" }.joined(separator: "&")
            let tooMany = try await form(cluster, .POST, "/quickblox/data/Bounded.json", fields)
            #expect(tooMany.status == 400 && tooMany.json["code"] as? Int == 1022, "\(tooMany.text.prefix(200))")
            let records = (1...101).map { "record[\($0)][n]=1" }.joined(separator: "&")
            let tooManyRecords = try await form(cluster, .POST, "/quickblox/data/Bounded/multi.json", records)
            #expect(tooManyRecords.json["code"] as? Int == 1021)
            let indexes = (0...100).map { "tags[\($0)]=x" }.joined(separator: "&")
            let tooManyIndexes = try await form(cluster, .POST, "/quickblox/data/Bounded.json", indexes)
            #expect(tooManyIndexes.json["code"] as? Int == 1022)
            #expect(try await cluster.send(.GET, "/data/Bounded", key: .serverCode).json["code"] as? Int == 1009)
        }
    }

    @Test func malformedQuickBloxBodiesAreClientErrors() async throws {
        try await TestCluster.shared { cluster async throws in
            let created = try await cluster.send(.POST, "/quickblox/data/Bad.json", #"{"n": 1, "tags": [1]}"#)
            let id = try #require(created.json["_id"] as? String, "\(created.text)")
            let path = "/quickblox/data/Bad/\(id).json"
            for body in [
                "inc[n=1", "pop[tags]=2", "inc[n]=many", "push[tags]=1&pull[tags]=1", "a[b][c][d][e][f]=1",
                "permissions[read]=open", "%zz=1",
            ] {
                let refused = try await form(cluster, .PUT, path, body)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 1022, "\(body): \(refused.text)")
            }
            let wrongType = try await cluster.send(.PUT, path, #"{"push": {"n": [2]}}"#)
            #expect(wrongType.status == 400, "an array operator on a number column: \(wrongType.text)")
            let empty = try await cluster.send(.PUT, path, #"{}"#)
            #expect(empty.status == 400 && empty.json["code"] as? Int == 1022)
            let missing = try await cluster.send(.PUT, "/quickblox/data/Bad/nope.json", #"{"n": 2}"#)
            #expect(missing.status == 404 && missing.json["code"] as? Int == 1000)
            let after = try await cluster.send(.GET, path)
            let record = try items(after).first
            #expect(record?["n"] as? Int == 1 && record?["tags"] as? [Int] == [1])
        }
    }
}
