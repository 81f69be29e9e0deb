import Foundation
import TestSupport
import Testing

@testable import MessagingService

/// The one subscription book under the real-time feeds, against a plain model: after any
/// sequence of adds, removals, departures and identity changes, each key holds exactly the
/// subscriptions the model holds, a removal answers what it removed, and no connection is
/// remembered once it holds nothing.
@Suite(.tags(.fast)) struct SubscriptionBookTests {
    struct Entry: Equatable {
        let connection: Int
        let id: String
        let key: String
        var value: Int
    }

    /// A small deterministic generator, so a failure replays from its seed.
    struct SplitMix {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    @Test(arguments: 0..<200) func everySequenceOfOperationsAgreesWithTheModel(seed: Int) {
        var random = SplitMix(state: UInt64(seed))
        let connections = (0..<4).map { _ in UUID() }
        var book = SubscriptionBook<String, Int>()
        var model: [Entry] = []
        for step in 0..<60 {
            let connection = random.next(4)
            let id = "s\(random.next(3))"
            switch random.next(10) {
            case 0..<5:
                let key = "k\(random.next(3))"
                book.add(step, connection: connections[connection], id: id, on: key)
                model.removeAll { $0.connection == connection && $0.id == id && $0.key == key }
                model.append(Entry(connection: connection, id: id, key: key, value: step))
            case 5..<7:
                let removed = book.remove(connection: connections[connection], id: id)
                let expected = model.filter { $0.connection == connection && $0.id == id }
                #expect(Set(removed.map(\.subscription)) == Set(expected.map(\.value)), "seed \(seed) step \(step)")
                model.removeAll { $0.connection == connection && $0.id == id }
            case 7:
                let removed = book.removeAll(connection: connections[connection])
                #expect(
                    Set(removed.map(\.subscription)) == Set(model.filter { $0.connection == connection }.map(\.value)))
                model.removeAll { $0.connection == connection }
            default:
                book.update(connection: connections[connection]) { $0 += 1_000 }
                for index in model.indices where model[index].connection == connection { model[index].value += 1_000 }
            }
            for key in ["k0", "k1", "k2"] {
                #expect(
                    book.subscriptions(of: key).sorted() == model.filter { $0.key == key }.map(\.value).sorted(),
                    "seed \(seed) step \(step) key \(key)")
                #expect(book.contains(key) == model.contains { $0.key == key })
            }
            #expect(book.isEmpty == model.isEmpty)
            #expect(book.connectionCount == Set(model.map(\.connection)).count, "no connection kept for nothing")
        }
    }
}
