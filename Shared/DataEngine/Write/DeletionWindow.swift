/// Which of the objects a bulk delete matches it removes: after skipping ``offset`` of them, at
/// most ``limit`` (every one when nil), in the default find order (`created`, then `objectId`),
/// counting only objects the caller may remove. Backbeam's `removeObjects:offset:` and
/// `removeAllObjects`.
package struct DeletionWindow: Sendable, Equatable {
    /// The most objects removed; nil removes every match after ``offset``.
    package var limit: Int?
    /// How many of the first matches stay.
    package var offset: Int

    /// The largest ``limit``: a window's event then still lists every object it removed
    /// (``ChangeEvents/touchedLimit``).
    package static let maximumLimit = 1_000

    /// A window of `limit` objects (nil: all) after `offset`.
    package init(limit: Int?, offset: Int = 0) {
        self.limit = limit
        self.offset = offset
    }

    /// Every matching object: a plain bulk delete.
    package static let all = DeletionWindow(limit: nil)

    /// Whether the window takes every match (no statement around the condition is needed).
    var isAll: Bool { limit == nil && offset == 0 }
}
