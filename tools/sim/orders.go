package sim

import "time"

// Order is an order at the simulated shop, as lookup_order answers it.
type Order struct {
	ID            string    `json:"order_id"`
	Status        string    `json:"status"` // placed, packed, shipped, delivered or cancelled
	AmountMinor   int64     `json:"amount_minor"`
	Currency      string    `json:"currency"`
	CustomerName  string    `json:"customer_name"`
	CustomerEmail string    `json:"customer_email"`
	Account       string    `json:"account"` // the payment account, an IBAN without spaces
	AccountLast4  string    `json:"account_last4"`
	Address       string    `json:"address"`
	Items         []Item    `json:"items"`
	PlacedAt      time.Time `json:"placed_at"`
	// RefundedMinor is what has been refunded and not reversed. Demo data
	// starts at zero.
	RefundedMinor int64 `json:"refunded_minor"`
}

// Item is one line of an order.
type Item struct {
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	Quantity  int64  `json:"quantity"`
	UnitMinor int64  `json:"unit_minor"`
}

// Order statuses. An order can be changed until it ships.
const (
	StatusPlaced    = "placed"
	StatusPacked    = "packed"
	StatusShipped   = "shipped"
	StatusDelivered = "delivered"
	StatusCancelled = "cancelled"
)

// changeWindow is how long after it was placed an unshipped order can
// still be changed: its dispatch cut-off.
const changeWindow = 48 * time.Hour

// RefundDemoOrder is the order of the approval demo, "Refund $2,400.00 to
// account 9182": delivered, USD 2,400.00, paid from an account ending 9182.
const RefundDemoOrder = "ORD-1004"

// DemoTenant is the tenant the demo orders belong to: the development
// demo's tenant (agent.SeedDemo creates it). Any other tenant starts with
// no orders.
const DemoTenant = "acme"

// DemoOrders returns the orders a new simulator database is seeded with,
// as DemoTenant's.
// The slice is the caller's own. Names, addresses and accounts are
// invented; every account is an IBAN with valid check digits (so redaction
// recognises it) and every email address is at example.com.
func DemoOrders() []Order {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	orders := []Order{
		{
			ID: "ORD-1001", Status: StatusPlaced, AmountMinor: 12999, Currency: "USD",
			CustomerName: "Maya Okafor", CustomerEmail: "maya.okafor@example.com",
			Account: "GB86NWBK60161331927054", Address: "14 Harbour Street, Bristol BS1 4QA, United Kingdom",
			Items:    []Item{{SKU: "AUD-220", Name: "Wireless headphones", Quantity: 1, UnitMinor: 12999}},
			PlacedAt: at("2026-03-02T09:14:00Z"),
		},
		{
			ID: "ORD-1002", Status: StatusPacked, AmountMinor: 5400, Currency: "USD",
			CustomerName: "Lukas Brandt", CustomerEmail: "lukas.brandt@example.com",
			Account: "DE25370400440532017741", Address: "Kastanienallee 21, 10435 Berlin, Germany",
			Items:    []Item{{SKU: "TEE-014", Name: "Cotton t-shirt", Quantity: 2, UnitMinor: 2700}},
			PlacedAt: at("2026-03-02T11:40:00Z"),
		},
		{
			ID: "ORD-1003", Status: StatusShipped, AmountMinor: 89900, Currency: "USD",
			CustomerName: "Sanne de Vries", CustomerEmail: "sanne.devries@example.com",
			Account: "NL19ABNA0457218836", Address: "Prinsengracht 263, 1016 GV Amsterdam, Netherlands",
			Items:    []Item{{SKU: "KIT-310", Name: "Espresso machine", Quantity: 1, UnitMinor: 89900}},
			PlacedAt: at("2026-02-26T16:05:00Z"),
		},
		{
			ID: RefundDemoOrder, Status: StatusDelivered, AmountMinor: 240000, Currency: "USD",
			CustomerName: "Daniel Whitaker", CustomerEmail: "daniel.whitaker@example.com",
			Account: "GB74BUKB20201555559182", Address: "7 Marlborough Road, Manchester M20 6TP, United Kingdom",
			Items: []Item{
				{SKU: "DSK-900", Name: "Standing desk", Quantity: 1, UnitMinor: 189900},
				{SKU: "CHR-450", Name: "Ergonomic chair", Quantity: 1, UnitMinor: 50100},
			},
			PlacedAt: at("2026-02-18T10:22:00Z"),
		},
		{
			ID: "ORD-1005", Status: StatusDelivered, AmountMinor: 4550, Currency: "USD",
			CustomerName: "Camille Moreau", CustomerEmail: "camille.moreau@example.com",
			Account: "FR7630004008230001234567819", Address: "18 rue des Lilas, 69003 Lyon, France",
			Items: []Item{
				{SKU: "STN-101", Name: "Hardcover notebook", Quantity: 1, UnitMinor: 1550},
				{SKU: "STN-205", Name: "Fountain pen", Quantity: 2, UnitMinor: 1500},
			},
			PlacedAt: at("2026-02-20T08:47:00Z"),
		},
		{
			ID: "ORD-1006", Status: StatusPlaced, AmountMinor: 31000, Currency: "USD",
			CustomerName: "Javier Ortega", CustomerEmail: "javier.ortega@example.com",
			Account: "ES5420850166610330174627", Address: "Calle de Alcalá 45, 28014 Madrid, Spain",
			Items:    []Item{{SKU: "OUT-640", Name: "Hiking boots", Quantity: 1, UnitMinor: 31000}},
			PlacedAt: at("2026-03-03T14:30:00Z"),
		},
		{
			ID: "ORD-1007", Status: StatusCancelled, AmountMinor: 7525, Currency: "USD",
			CustomerName: "Aoife Byrne", CustomerEmail: "aoife.byrne@example.com",
			Account: "IE69AIBK93115249201563", Address: "22 Grafton Street, Dublin 2, D02 HX65, Ireland",
			Items: []Item{
				{SKU: "FIT-030", Name: "Yoga mat", Quantity: 1, UnitMinor: 4525},
				{SKU: "FIT-044", Name: "Water bottle", Quantity: 1, UnitMinor: 3000},
			},
			PlacedAt: at("2026-02-28T19:12:00Z"),
		},
		{
			ID: "ORD-1008", Status: StatusPacked, AmountMinor: 124900, Currency: "USD",
			CustomerName: "Lotte Peeters", CustomerEmail: "lotte.peeters@example.com",
			Account: "BE66068210986343", Address: "Meir 50, 2000 Antwerpen, Belgium",
			Items:    []Item{{SKU: "CMP-1400", Name: "Laptop", Quantity: 1, UnitMinor: 124900}},
			PlacedAt: at("2026-03-03T07:55:00Z"),
		},
		{
			ID: "ORD-1009", Status: StatusShipped, AmountMinor: 1899, Currency: "USD",
			CustomerName: "Lena Gruber", CustomerEmail: "lena.gruber@example.com",
			Account: "AT611904300234573201", Address: "Mariahilfer Straße 88, 1070 Wien, Austria",
			Items:    []Item{{SKU: "ACC-077", Name: "Phone case", Quantity: 1, UnitMinor: 1899}},
			PlacedAt: at("2026-02-27T12:01:00Z"),
		},
		{
			ID: "ORD-1010", Status: StatusPlaced, AmountMinor: 56040, Currency: "USD",
			CustomerName: "Mikkel Jensen", CustomerEmail: "mikkel.jensen@example.com",
			Account: "DK2800400440118870", Address: "Nørrebrogade 12, 2200 København N, Denmark",
			Items:    []Item{{SKU: "HOM-512", Name: "Dining chair", Quantity: 4, UnitMinor: 14010}},
			PlacedAt: at("2026-03-04T17:45:00Z"),
		},
	}
	for i := range orders {
		orders[i].AccountLast4 = last4(orders[i].Account)
	}
	return orders
}

func last4(account string) string {
	if len(account) < 4 {
		return account
	}
	return account[len(account)-4:]
}

// changeOpen reports whether an order in status can still be changed.
func changeOpen(status string) bool {
	return status == StatusPlaced || status == StatusPacked
}
