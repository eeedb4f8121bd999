package redact

import "testing"

func TestProbe(t *testing.T) {
	r := New(testKey)
	for _, s := range []string{
		"Please call about order 2024-118734 placed 2026-11-30",
		"Contact us re invoice 4500012345 (PO 7700-1234-88) dated 30/11/2026",
		"call center ticket 20261130-0042 at 14:32",
		"phone order total 1.234.567,89 € incl. 19% VAT",
		"tel. support case 00012345 opened 11.30.2026",
		"We called 3 times between 09:00 and 17:30 on 2026/11/30",
		"mobile app version 10.4.2 build 10402 (2026.11.30)",
		"SMS campaign 2026-Q4 reached 1,250,000 users (12.5%)",
		"contact center KPI: 98.76% SLA, 4.2 avg, 12 345 calls",
		"call ID 5f3c2a1b-8e7d-4c6b-9a0f-1e2d3c4b5a69 duration 00:12:34",
		"Order no. 4111 1111 1111 1112 was rejected",
		"SSN check failed for 078 05 112 (too short)",
		"ssn field: 000-00-0000",
		"timestamps 1732960800, 1732960800.123, 2026-11-30T14:32:05+01:00, 20261130T143205Z",
		"versions 1.2.3.4-beta, 2.0.0.1 (release), 4.19.0-25-amd64",
		"git 3f9a1c2 merged into main at a1b2c3d4e5f6 (PR #4521)",
		"sku ABC-12345-XL, part 8841-22-A, model RX-7800-XT, EAN 5901234123457",
		"card-like 5105 1051 0510 5106 and 3782 822463 10006 (both invalid)",
		"IBAN-like GB82 WEST 1234 5698 7654 33 and NL91ABNA0417164301",
		"amounts: $1,234.56; 1234.56 USD; EUR 1.234,56; ¥ 120,000; ₹1,00,000",
		"coordinates 40.7128,-74.0060 and 51.5074, -0.1278",
		"percent 0.5%, 99.999%, +12.5%, -3.2%",
		"dates 12.11.2026 30-11-2026 2026.11.30 11/30/26",
		"ranges 10-20, 100-200, 1000-2000, 2019-2026",
		"size 1920x1080, 3840 x 2160, 16:9",
		"phone number format should be +CC NNN NNN NNNN",
		"call 911 or 112; dial *123#",
		"ratio 1:1000000, counter 000123456789",
		"Flight BA 2490 departs 07:45 from gate 23B, seat 14C",
		"the 2026 budget is 45 000 000 and headcount 1 200",
	} {
		t.Logf("%s\n      -> %s", s, kinds(r.String(s)))
	}
}
