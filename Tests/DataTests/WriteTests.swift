import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import QueryLanguage
import TestSupport
import Testing

/// Saves, dynamic schema, typing, bulk operations, expressions and change events.
@Suite(.timeLimit(.minutes(20))) struct WriteTests {
    @Test func createInfersColumnsAndReturnsTheWireShape() async throws {
        try await EngineFixture.with { fixture in
            let saved = try await fixture.create(
                "Order", #"{"title": "x", "qty": 2, "price": 9.5, "paid": false, "meta": {"a": [1]}, "note": null}"#)
            let id = try #require(saved["objectId"] as? String)
            #expect(id.count == 36 && id == id.uppercased())
            #expect(saved["___class"] as? String == "Order")
            #expect(saved["created"] is Int)
            #expect(saved.keys.contains("updated") && saved.keys.contains("ownerId"))
            #expect((saved["meta"] as? [String: Any])?["a"] as? [Int] == [1])
            let properties = try await fixture.engine.properties("Order", identity: fixture.rest)
            let types = Dictionary(
                uniqueKeysWithValues: (properties.array ?? []).compactMap { item -> (String, String)? in
                    guard let name = item.object?["name"]?.string, let type = item.object?["type"]?.string else {
                        return nil
                    }
                    return (name, type)
                })
            #expect(
                types == [
                    "objectId": "STRING_ID", "created": "DATETIME", "updated": "DATETIME", "ownerId": "STRING",
                    "title": "STRING", "qty": "INT", "price": "DOUBLE", "paid": "BOOLEAN", "meta": "JSON",
                ])
            let fetched = try fixture.decode(
                try await fixture.engine.object(
                    "Order", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger))
            #expect(fetched["title"] as? String == "x")
            #expect(fetched["note"] == nil)
        }
    }

    @Test func wrongTypesNameEveryPropertyAndWriteNothing() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Item", #"{"price": 1.5, "count": 1, "name": "a", "when": 1}"#)
            do {
                _ = try await fixture.create("Item", #"{"price": "cheap", "count": 1.5, "name": 3}"#)
                Issue.record("accepted wrong types")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1012 && error.status == 400)
                #expect(
                    error.message
                        == "Unable to save object - invalid data type for properties - price, count, name. You can change the property type in developer console."
                )
            }
            let coerced = try await fixture.create("Item", #"{"price": "2.5", "count": "34"}"#)
            #expect(coerced["price"] as? Double == 2.5 && coerced["count"] as? Int == 34)
            #expect(try await fixture.rowCount("Item") == 2)
        }
    }

    @Test func missingObjectsAndTablesUseTheContractErrors() async throws {
        try await EngineFixture.with { fixture in
            await #expect(throws: DataError.tableNotFound("EmptyTable")) {
                _ = try await fixture.find("EmptyTable", [])
            }
            _ = try await fixture.create("Thing", #"{"a": 1}"#)
            await #expect(throws: DataError.entityNotFound("NonExistingObjectId")) {
                _ = try await fixture.engine.object(
                    "Thing", id: "NonExistingObjectId", query: FindQuery(), identity: fixture.rest,
                    logger: fixture.logger)
            }
            await #expect(throws: DataError.entityNotFound("nope")) {
                _ = try await fixture.engine.delete("Thing", id: "nope", identity: fixture.rest, logger: fixture.logger)
            }
            await #expect(throws: DataError.entityNotFound("nope")) {
                _ = try await fixture.engine.update(
                    "Thing", id: "nope", changes: try fixture.object(#"{"a": 2}"#), identity: fixture.rest,
                    logger: fixture.logger)
            }
        }
    }

    @Test func updateDeleteUpsertAndSave() async throws {
        try await EngineFixture.with { fixture in
            let saved = try await fixture.create("Note", #"{"text": "a", "stars": 1}"#)
            let id = try #require(saved["objectId"] as? String)
            let updated = try fixture.decode(
                try await fixture.engine.update(
                    "Note", id: id, changes: try fixture.object(#"{"text": "b", "extra": true}"#),
                    identity: fixture.rest, logger: fixture.logger))
            #expect(
                updated["text"] as? String == "b" && updated["stars"] as? Int == 1 && updated["extra"] as? Bool == true)
            #expect((updated["updated"] as? Int ?? 0) >= (saved["created"] as? Int ?? .max))
            let viaSave = try fixture.decode(
                try await fixture.engine.save(
                    "Note", object: try fixture.object(#"{"objectId": "\#(id)", "stars": 5}"#), identity: fixture.rest,
                    logger: fixture.logger))
            #expect(viaSave["stars"] as? Int == 5 && viaSave["text"] as? String == "b")
            let upserted = try fixture.decode(
                try await fixture.engine.upsert(
                    "Note", object: try fixture.object(#"{"objectId": "MY-ID", "text": "u"}"#), identity: fixture.rest,
                    logger: fixture.logger))
            #expect(upserted["objectId"] as? String == "MY-ID")
            let again = try fixture.decode(
                try await fixture.engine.upsert(
                    "Note", object: try fixture.object(#"{"objectId": "MY-ID", "text": "v"}"#), identity: fixture.rest,
                    logger: fixture.logger))
            #expect(again["text"] as? String == "v")
            do {
                _ = try await fixture.create("Note", #"{"objectId": "MY-ID"}"#)
                Issue.record("duplicate objectId accepted")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1025 && error.status == 409)
            }
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let time = try await fixture.engine.delete("Note", id: id, identity: fixture.rest, logger: fixture.logger)
            #expect(time >= before)
            #expect(try await fixture.rowCount("Note") == 1)
        }
    }

    @Test func dynamicSchemaOffRefusesNewTablesAndColumns() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Known", #"{"a": 1}"#)
            _ = try await fixture.engine.setDynamicSchema(false, identity: fixture.serverCode, logger: fixture.logger)
            await #expect(throws: DataError.tableNotFound("Unknown")) {
                _ = try await fixture.create("Unknown", #"{"a": 1}"#)
            }
            do {
                _ = try await fixture.create("Known", #"{"a": 2, "b": 1}"#)
                Issue.record("new column accepted")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1013)
            }
            _ = try await fixture.create("Known", #"{"a": 3}"#)
            #expect(try await fixture.rowCount("Known") == 2)
            await #expect(throws: DataError.permissionDenied("Schema", table: "*")) {
                _ = try await fixture.engine.setDynamicSchema(true, identity: fixture.rest, logger: fixture.logger)
            }
        }
    }

    @Test func twentyConcurrentSavesAddingColumnsAllSucceed() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Wide", #"{"base": 0}"#)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        _ = try await fixture.create("Wide", #"{"base": \#(index), "c\#(index)": \#(index)}"#)
                    }
                }
                try await group.waitForAll()
            }
            let columns = try await fixture.engine.properties("Wide", identity: fixture.rest).array ?? []
            #expect(columns.count == 4 + 1 + 20)
            #expect(try await fixture.rowCount("Wide") == 21)
        }
    }

    @Test func concurrentExpressionIncrementsLoseNoUpdate() async throws {
        try await EngineFixture.with { fixture in
            let counter = try await fixture.create("Counter", #"{"hits": 0}"#)
            let id = try #require(counter["objectId"] as? String)
            let increment = try fixture.object(#"{"hits": {"___class": "BackendlessExpression", "value": "hits + 1"}}"#)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        _ = try await fixture.engine.update(
                            "Counter", id: id, changes: increment, identity: fixture.rest, logger: fixture.logger)
                    }
                }
                try await group.waitForAll()
            }
            let final = try fixture.decode(
                try await fixture.engine.object(
                    "Counter", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger))
            #expect(final["hits"] as? Int == 50)
            let bulk = try await fixture.engine.updateBulk(
                "Counter", condition: nil,
                changes: try fixture.object(#"{"hits": {"___class": "BackendlessExpression", "value": "hits * 2"}}"#),
                identity: fixture.rest, logger: fixture.logger)
            #expect(bulk == 1)
        }
    }

    @Test func bulkCreateUpdateDeleteAndUpsert() async throws {
        try await EngineFixture.with { fixture in
            let objects = try (0..<5).map { try fixture.object(#"{"n": \#($0), "even": \#($0 % 2 == 0)}"#) }
            let ids = try await fixture.engine.createBulk(
                "Bulk", objects: objects, identity: fixture.rest, logger: fixture.logger)
            #expect(ids.count == 5 && Set(ids).count == 5)
            let byOrder = try await fixture.find("Bulk", [("sortBy", "n")])
            #expect(byOrder.map { $0["objectId"] as? String } == ids)
            let changed = try await fixture.engine.updateBulk(
                "Bulk", condition: try QueryParser.condition("even = true"),
                changes: try fixture.object(#"{"tag": "e"}"#),
                identity: fixture.rest, logger: fixture.logger)
            #expect(changed == 3)
            let deleted = try await fixture.engine.deleteBulk(
                "Bulk", condition: try QueryParser.condition("n >= 3"), identity: fixture.rest, logger: fixture.logger)
            #expect(deleted == 2)
            #expect(
                try await fixture.engine.deleteBulk(
                    "Bulk", condition: try QueryParser.condition("n > 100"), identity: fixture.rest,
                    logger: fixture.logger) == 0)
            let upserted = try await fixture.engine.upsertBulk(
                "Bulk",
                objects: [
                    try fixture.object(#"{"objectId": "\#(ids[0])", "n": 10}"#), try fixture.object(#"{"n": 11}"#),
                ],
                identity: fixture.rest, logger: fixture.logger)
            #expect(upserted.count == 2 && upserted[0] == ids[0])
            #expect(try await fixture.rowCount("Bulk") == 4)
            let tooMany = try (0..<101).map { try fixture.object(#"{"n": \#($0)}"#) }
            await #expect(throws: DataError.bulkLimit(100)) {
                _ = try await fixture.engine.createBulk(
                    "Bulk", objects: tooMany, identity: fixture.rest, logger: fixture.logger)
            }
            do {
                _ = try await fixture.engine.createBulk(
                    "Bulk", objects: [try fixture.object(#"{"n": 1}"#), try fixture.object(#"{"n": "bad"}"#)],
                    identity: fixture.rest, logger: fixture.logger)
                Issue.record("accepted a bad bulk")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1012)
            }
            #expect(try await fixture.rowCount("Bulk") == 4)
        }
    }

    @Test func aGetByIdIsOneStatementOnceTheCatalogIsWarm() async throws {
        try await EngineFixture.with { fixture in
            let saved = try await fixture.create("Fast", #"{"a": 1}"#)
            let id = try #require(saved["objectId"] as? String)
            _ = try await fixture.engine.object(
                "Fast", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
            let before = fixture.engine.statements.value
            _ = try await fixture.engine.object(
                "Fast", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
            #expect(fixture.engine.statements.value - before == 1)
            let beforeCreate = fixture.engine.statements.value
            _ = try await fixture.create("Fast", #"{"a": 2}"#)
            #expect(fixture.engine.statements.value - beforeCreate == 1)
        }
    }

    @Test func writesToWatchedTablesEmitChangeEventsInCommitOrder() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Evented", #"{"a": 1}"#)
            try await fixture.database.withConnection { connection in
                let slot = try await ChangeSlot.temporary(on: connection, logger: fixture.logger)
                func read() async throws -> [ChangeEvent] {
                    let batch = try await slot.peek(before: nil, records: 1_000)
                    if let end = batch.advance { try await slot.advance(to: end) }
                    return batch.records.compactMap(ChangeEvent.init)
                }
                _ = try await fixture.create("Evented", #"{"a": 0}"#)
                #expect(try await read().isEmpty, "an unwatched table emits nothing")
                try await slot.watch([(fixture.appID, "Evented")], for: .seconds(60))
                let created = try await fixture.create("Evented", #"{"a": 2}"#)
                let id = try #require(created["objectId"] as? String)
                let updated = try fixture.decode(
                    try await fixture.engine.update(
                        "Evented", id: id, changes: try fixture.object(#"{"a": 3}"#), identity: fixture.rest,
                        logger: fixture.logger))
                _ = try await fixture.engine.delete("Evented", id: id, identity: fixture.rest, logger: fixture.logger)
                let bulk = try await fixture.engine.createBulk(
                    "Evented", objects: [try fixture.object(#"{"a": 4}"#), try fixture.object(#"{"a": 5}"#)],
                    identity: fixture.rest, logger: fixture.logger)
                await #expect(throws: (any Error).self) {
                    try await fixture.engine.transaction(identity: fixture.rest, logger: fixture.logger) {
                        transaction in
                        _ = try await transaction.create("Evented", object: try fixture.object(#"{"a": 99}"#))
                        throw CancellationError()
                    }
                }
                let condition = try QueryParser.condition("a >= 4")
                _ = try await fixture.engine.updateBulk(
                    "Evented", condition: condition, changes: try fixture.object(#"{"a": 6}"#), identity: fixture.rest,
                    logger: fixture.logger)
                _ = try await fixture.engine.deleteBulk(
                    "Evented", condition: nil, identity: fixture.rest, logger: fixture.logger)
                let peeked = try await slot.peek(before: nil, records: 1_000).records
                let events = try await read()
                #expect(
                    peeked.compactMap(ChangeEvent.init).map(\.position) == events.map(\.position),
                    "a peek leaves the records for the next read")
                #expect(try await read().isEmpty, "what was read and advanced past is not read again")
                try await slot.drop()

                #expect(
                    events.map(\.kind) == [.created, .updated, .deleted, .bulkCreated, .bulkUpdated, .bulkDeleted],
                    "a rolled-back write emits nothing")
                #expect(events.allSatisfy { $0.app == fixture.appID && $0.table == "Evented" })
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.position < $1.position })
                #expect(
                    NSDictionary(dictionary: try fixture.decode(JSONValue.object(events[0].objects[0]).jsonText))
                        == NSDictionary(dictionary: created))
                #expect(
                    NSDictionary(dictionary: try fixture.decode(JSONValue.object(events[1].objects[0]).jsonText))
                        == NSDictionary(dictionary: updated))
                #expect(
                    events[2].objectId == id && events[2].objects[0]["a"] == .integer(3),
                    "a delete carries the object as it was")
                #expect(events[3].objects.compactMap { $0["objectId"]?.string } == bulk)
                #expect(events[4].whereClause == "a >= 4" && events[4].count == 2)
                #expect(Set(events[4].touched?.map(\.objectId) ?? []) == Set(bulk))
                #expect(events[5].whereClause == nil && events[5].count == 4 && events[5].touched?.count == 4)
            }
        }
    }
}
