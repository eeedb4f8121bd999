package redact

import (
	"fmt"
	"strings"
)

// Generators and templates for the personal data without a fixed shape
// (names, street addresses, postcodes, dates of birth, identity numbers),
// the Unicode forms folding must see through, and their near misses.

// Given names the gazetteer knows, from many cultures, and ones it does
// not (found by cue phrases or the named-entity model).
var (
	corpusGiven = []string{"Siobhan", "Dmitri", "Maria", "José María", "Jean-Pierre", "Aoife", "Mohammed", "Fatima",
		"Priya", "Wei", "Hiroshi", "Kwame", "Ngozi", "Lars", "Zofia", "Ahmed", "Thandiwe", "Chloé", "Jürgen", "Inès",
		"Oluwaseun", "Mei", "Raúl", "Björn", "Łukasz", "Yusuf", "Anaïs", "Sinéad", "Kenji", "Amara", "Joaquín",
		"Marie-Hélène", "Padraig", "Ayşe", "Wanjiru", "Giulia", "Søren", "Layla"}
	corpusRare = []string{"Bartholomew", "Ignatius", "Leopold", "Cornelius", "Percival", "Eustace", "Thaddeus",
		"Evander", "Octavia", "Wilhelmina", "Ottilie", "Rosalind", "Anselm", "Quentin", "Gaspard", "Radoslav"}
	corpusSurnames = []string{"O'Sullivan", "Carvalho", "van der Berg", "bin Rashid", "de la Cruz", "Müller-Lüdenscheidt",
		"García Márquez", "Nguyen", "Okafor", "al-Sayed", "D'Angelo", "McAllister", "von Stauffenberg", "Dubois",
		"Kowalczyk", "Papadopoulos", "Tanaka", "Abubakar", "da Silva", "dos Santos", "ter Horst", "Ó Briain",
		"Ben-David", "Mensah", "Fitzgerald", "Lindqvist", "Oyelaran", "Castellanos", "Achterberg", "Hernández-Soto"}
)

func (g *gen) fullName(given []string) string {
	n := g.pick(given...) + " " + g.pick(corpusSurnames...)
	if g.rng.IntN(6) == 0 {
		n = g.pick(given...) + " " + g.pick("A.", "J.", "K.") + " " + g.pick(corpusSurnames...)
	}
	return n
}

var streetNames = []string{"Harbour", "Baker", "Elm", "Oak", "Maple", "Church", "Mill", "Station", "Victoria", "High",
	"Kingsley", "Willow", "Cedar", "Orchard", "Riverside", "Pennsylvania", "Queen's", "St Mary's"}

func (g *gen) streetEN() string {
	n := fmt.Sprint(g.n(1, 2400))
	if g.rng.IntN(6) == 0 {
		n += g.pick("A", "B", "a")
	}
	return n + " " + g.pick(streetNames...) + " " + g.pick("Street", "St", "Road", "Rd", "Avenue", "Ave", "Lane", "Drive", "Court", "Blvd", "Close", "Way")
}

func (g *gen) streetDE() string {
	n := fmt.Sprint(g.n(1, 180))
	base := g.pick("Haupt", "Linden", "Goethe", "Schiller", "Bahnhof", "Kirch", "Berg", "Garten", "Müller", "Rosen")
	switch g.rng.IntN(5) {
	case 0:
		return base + "weg " + n
	case 1:
		return base + "platz " + n
	case 2:
		return g.pick("Berliner", "Frankfurter", "Alte", "Neue") + " Straße " + n
	case 3:
		return base + "str. " + n + g.pick("", "a")
	}
	return base + g.pick("straße ", "strasse ") + n
}

func (g *gen) streetFR() string {
	n := fmt.Sprint(g.n(1, 220))
	return n + g.pick(" ", ", ") + g.pick("rue de la Paix", "rue du Faubourg Saint-Honoré", "avenue Victor Hugo",
		"boulevard Haussmann", "rue des Lilas", "allée des Tilleuls", "rue Émile Zola", "avenue de l'Opéra", "place Bellecour")
}

func (g *gen) streetES() string {
	n := fmt.Sprint(g.n(1, 250))
	return g.pick("Calle Mayor", "Calle de Alcalá", "Avenida de la Constitución", "Calle Gran Vía", "Avenida Diagonal",
		"Plaza Mayor", "Paseo de Gracia", "Calle del Carmen") + g.pick(" ", ", ") + n
}

func (g *gen) postcodeUK() string {
	const in = "ABDEFGHJLNPQRSTUWXYZ"
	out := g.pick("BS3", "SW1A", "M1", "EC1A", "W1D", "B33", "CR2", "LS1", "G2", "EH1", "NW3", "SE15", "DN55")
	return out + " " + fmt.Sprint(g.n(0, 9)) + string(in[g.rng.IntN(len(in))]) + string(in[g.rng.IntN(len(in))])
}

func (g *gen) dob(lang string) string {
	y, m, d := g.n(1935, 2006), g.n(1, 12), g.n(1, 28)
	en := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	de := []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	fr := []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
	es := []string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}
	switch lang {
	case "de":
		return g.pick(fmt.Sprintf("%02d.%02d.%d", d, m, y), fmt.Sprintf("%d. %s %d", d, de[m-1], y), fmt.Sprintf("%d.%d.%d", d, m, y))
	case "fr":
		return g.pick(fmt.Sprintf("%02d/%02d/%d", d, m, y), fmt.Sprintf("%d %s %d", d, fr[m-1], y))
	case "es":
		return g.pick(fmt.Sprintf("%02d/%02d/%d", d, m, y), fmt.Sprintf("%d de %s de %d", d, es[m-1], y))
	}
	return g.pick(fmt.Sprintf("%02d/%02d/%d", m, d, y), fmt.Sprintf("%d-%02d-%02d", y, m, d), fmt.Sprintf("%d %s %d", d, en[m-1], y),
		fmt.Sprintf("%s %d, %d", en[m-1], d, y), fmt.Sprintf("%s %d %d", en[m-1][:3], d, y))
}

func (g *gen) dni() string {
	const letters = "TRWAGMYFPDXBNJZSQVHLCKE"
	n := g.n(10000000, 99999999)
	return fmt.Sprintf("%08d%c", n, letters[n%23])
}

var piiGenerators = map[string]func(g *gen, lang string) (string, string){
	"name":        func(g *gen, _ string) (string, string) { return g.fullName(corpusGiven), KindName },
	"name_rare":   func(g *gen, _ string) (string, string) { return g.fullName(corpusRare), KindName },
	"surname":     func(g *gen, _ string) (string, string) { return g.pick(corpusSurnames...), KindName },
	"street_en":   func(g *gen, _ string) (string, string) { return g.streetEN(), KindAddress },
	"street_de":   func(g *gen, _ string) (string, string) { return g.streetDE(), KindAddress },
	"street_fr":   func(g *gen, _ string) (string, string) { return g.streetFR(), KindAddress },
	"street_es":   func(g *gen, _ string) (string, string) { return g.streetES(), KindAddress },
	"postcode_uk": func(g *gen, _ string) (string, string) { return g.postcodeUK(), KindAddress },
	"postcode_de": func(g *gen, _ string) (string, string) { return fmt.Sprintf("%05d", g.n(1067, 99998)), KindAddress },
	"zip_us": func(g *gen, _ string) (string, string) {
		z := fmt.Sprintf("%05d", g.n(1001, 99950))
		if g.rng.IntN(4) == 0 {
			z += "-" + g.digits(4)
		}
		return z, KindAddress
	},
	"dob": func(g *gen, l string) (string, string) { return g.dob(l), KindDOB },
	"passport": func(g *gen, _ string) (string, string) {
		return g.pick(g.digits(9), "C01X"+g.chars("0123456789CFGHJKLMNPRTVWXYZ", 5), g.digits(2)+"AV"+g.digits(5)), KindID
	},
	"natid": func(g *gen, _ string) (string, string) {
		return g.pick("L01X"+g.digits(5), g.digits(12), g.digits(2)+" "+g.digits(3)+" "+g.digits(3)+" "+g.digits(3)), KindID
	},
	"dl": func(g *gen, _ string) (string, string) {
		return g.pick(g.chars(genUpper, 5)+g.digits(6)+g.chars(genUpper, 2)+g.digits(1)+g.chars(genUpper, 2), "D"+g.digits(7), g.digits(12)), KindID
	},
	"dni": func(g *gen, _ string) (string, string) { return g.dni(), KindID },

	// Unicode forms of values with a shape.
	"card_nbsp": func(g *gen, _ string) (string, string) {
		d, groups := g.cardDigits()
		return group(d, groups, g.pick("\u00a0", "\u202f", "\u2009")), KindCard
	},
	"card_fw": func(g *gen, _ string) (string, string) {
		d, groups := g.cardDigits()
		return fullWidth(group(d, groups, g.pick(" ", "\u3000", "－"))), KindCard
	},
	"email_fw": func(g *gen, _ string) (string, string) {
		e := g.email()
		return strings.Replace(e, "@", "＠", 1), KindEmail
	},
	"phone_nnbsp": func(g *gen, _ string) (string, string) {
		return "+44\u202f20\u202f" + g.digits(4) + "\u202f" + g.digits(4), KindPhone
	},
	"iban_nbsp": func(g *gen, l string) (string, string) {
		return strings.ReplaceAll(printIBAN(g.ibanRaw(l)), " ", "\u00a0"), KindIBAN
	},

	// Near misses.
	"product": func(g *gen, _ string) (string, string) {
		return g.pick("Jordan sneakers", "Ford Transit parts", "Air Max 90", "Galaxy S24 case", "MacBook Pro charger",
			"Nike Air Force 1", "Ford Focus wipers", "Jordan 4 Retro", "Tesla Model 3 mats", "Victoria's Secret voucher"), ""
	},
	"company": func(g *gen, _ string) (string, string) {
		return g.pick("Acme Logistics GmbH", "Northwind Traders Ltd", "Contoso Support Team", "Globex Corporation",
			"Initech Solutions", "Müller Versand GmbH", "Dupont & Fils SARL", "Transportes García SL", "Umbrella Group"), ""
	},
	"region": func(g *gen, _ string) (string, string) {
		return g.pick("Greater Manchester", "Île-de-France", "New South Wales", "Bavaria", "North Rhine-Westphalia",
			"Catalonia", "São Paulo", "Ontario", "Lombardy", "the Paris region", "New York", "Rio de Janeiro", "Los Angeles"), ""
	},
	"city": func(g *gen, _ string) (string, string) {
		return g.pick("Berlin", "München", "Köln", "Hamburg", "Lyon", "Madrid", "Sevilla", "Leeds"), ""
	},
	"weekday": func(g *gen, _ string) (string, string) {
		return g.pick("Monday", "Friday", "Dienstag", "vendredi", "Jueves", "Saturday"), ""
	},
	"month": func(g *gen, _ string) (string, string) {
		return g.pick("March", "May", "June", "August", "Oktober", "juillet", "Diciembre") + " " + fmt.Sprint(g.n(1, 28)), ""
	},
	"sentstart": func(g *gen, _ string) (string, string) {
		return g.pick("Unfortunately", "However", "Great news", "Good morning", "Quick update", "Heads up", "Leider", "Malheureusement", "Lamentablemente"), ""
	},
	"orderdate": func(g *gen, l string) (string, string) { return g.date(l), "" },
}

// fullWidth writes ASCII digits, letters and '-' as their full-width forms.
func fullWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if '!' <= r && r <= '~' {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}

var piiTemplates = []template{
	{"ticket", "en", "Please change the delivery address for {order} to {street_en}, {postcode_uk}. The customer is {name}."},
	{"ticket", "en", "Refund {order}: {name} (date of birth {dob}), passport {passport} on file."},
	{"email", "en", "Dear {name},\nyour order {order} from {orderdate} has shipped to {region}. Kind regards,\n{company}"},
	{"email", "en", "From: {name} <{email}>\nSubject: Refund for {order}\nI was born on {dob} and my driving licence number is {dl}."},
	{"ticket", "en", "My name is {name} and I live at {street_en}, Springfield, IL {zip_us}. Order {order} never came."},
	{"ticket", "en", "Customer {name} asked about the {product} in {order}; ship to {region} by {weekday}."},
	{"chat", "en", "agent: I spoke to {name_rare} today about {order}; they want the {product} returned by {month}."},
	{"chat", "en", "agent: Escalated by {name_rare} because {order} was late. {sentstart}, the carrier lost it."},
	{"email", "en", "Thanks for your help!\n\nBest regards,\n{name}\n{company}"},
	{"ticket", "en", "{sentstart}, the parcel for {order} is stuck in {region}. Could Mr {surname} call us on {weekday}?"},
	{"ticket", "en", "DOB: {dob}. Passport no. {passport}. Please verify the account for {order} placed {orderdate}."},
	{"ticket", "en", "Order placed {orderdate}, delivered {orderdate}; the customer was born {dob}."},
	{"ticket", "en", "National ID {natid} verified for {name} on {orderdate}."},
	{"ticket", "en", "Ms {name} requested delivery to {street_en}, {postcode_uk} on {weekday} ({month})."},
	{"ticket", "en", "Ship to {street_en}, Austin, TX {zip_us}. Hi {name}, your {product} left on {orderdate}."},
	{"log", "en", `level=info msg="address updated" order={order} note="new address {street_en}, {postcode_uk} for {name}"`},
	{"json", "en", `{"tool":"update_address","arguments":{"order_id":"{order}","note":"Customer {name} moved to {street_en}"}}`},
	{"chat", "en", "user: pay with {card_nbsp} please\nagent: Thanks {name}, charging order {order}."},
	{"chat", "en", "user: card {card_fw}, mail {email_fw}\nagent: Got it, {sentstart} the payment for {order} is pending."},
	{"chat", "en", "user: call me on {phone_nnbsp} or wire to {iban_nbsp}\nagent: Noted for {order}."},
	{"ticket", "en", "Signed, {name}. Shipping region: {region}. Products: {product}, {product}."},
	{"ticket", "de", "Sehr geehrte Frau {surname},\nbitte liefern Sie an {street_de}, {postcode_de} Berlin. Geboren am {dob}. Personalausweis-Nr. {natid}."},
	{"ticket", "de", "Kunde {name}, {street_de}, {postcode_de} München, Bestellung {order} vom {orderdate}."},
	{"email", "de", "Vielen Dank für die schnelle Lieferung am {weekday}.\n\nMit freundlichen Grüßen\n{name}\n{company}"},
	{"ticket", "de", "Mein Name ist {name}, Führerschein Nr. {dl}, geb. {dob}. Lieferung nach {city} am {orderdate}."},
	{"ticket", "fr", "Bonjour, je m'appelle {name}. Adresse : {street_fr}, {postcode_de} Lyon. Née le {dob}. Passeport {passport}."},
	{"ticket", "fr", "Madame {surname} souhaite un remboursement pour {order} du {orderdate} ; livraison en {region}."},
	{"email", "fr", "Cordialement,\n{name}\n{company}\nPermis de conduire n° {dl}."},
	{"ticket", "es", "Hola, me llamo {name}. Vivo en {street_es}, {postcode_de} Madrid. Fecha de nacimiento: {dob}. DNI {dni}."},
	{"ticket", "es", "Cliente {name}, pedido {order} del {orderdate}, envío a {region} el {weekday}."},
	{"email", "es", "Atentamente,\n{name}\n{company}\nPasaporte número {passport}."},
	{"ticket", "es", "Sra. {surname} pide la devolución de {order}; nacida el {dob}, entrega en {city}."},
}

func init() {
	for k, f := range piiGenerators {
		generators[k] = f
	}
	// Three times over, so that each kind has a hundred values or more.
	for range 3 {
		corpusTemplates = append(corpusTemplates, piiTemplates...)
	}
	for k, d := range map[string]string{
		"product": KindName, "company": KindName, "region": KindName, "city": KindName, "weekday": KindName,
		"month": KindName, "sentstart": KindName, "orderdate": KindDOB, "zip": KindAddress,
	} {
		tempts[k] = d
	}
}
