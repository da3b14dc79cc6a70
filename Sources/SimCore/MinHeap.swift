/// A binary min-heap: the smallest element first, each insertion and removal O(log n). Elements that
/// compare equal come out in no particular order (but always the same one for the same operations).
struct MinHeap<Element: Comparable & Sendable>: Sendable {
    private var items: [Element] = []

    /// The smallest element, if any.
    var first: Element? { items.first }

    /// How many elements there are.
    var count: Int { items.count }

    /// Makes room for `capacity` elements.
    mutating func reserveCapacity(_ capacity: Int) { items.reserveCapacity(capacity) }

    /// Adds `element`.
    mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    mutating func popFirst() -> Element? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        guard !items.isEmpty else { return top }
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left] < items[smallest] { smallest = left }
            if right < items.count, items[right] < items[smallest] { smallest = right }
            guard smallest != parent else { return top }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
