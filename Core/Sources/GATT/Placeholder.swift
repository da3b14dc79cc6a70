// Replaced by the GATT core.
