/// A FIFO over an array and a head index: amortised O(1) push and pop, its
/// storage compacted once the consumed prefix is half of it (or all of it).
/// Its bound is the caller's: the streams push a key only while it is not
/// already waiting.
struct IndexQueue<Element: Sendable>: Sendable {
    private var items: [Element] = []
    private var head = 0

    /// Elements waiting.
    var count: Int { items.count - head }

    mutating func push(_ element: Element) { items.append(element) }

    /// The oldest element, removed.
    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        head += 1
        if head == items.count || (head >= 1024 && head * 2 >= items.count) {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    /// The oldest element, left in place.
    var first: Element? { head < items.count ? items[head] : nil }

    mutating func removeAll() {
        items = []
        head = 0
    }
}
