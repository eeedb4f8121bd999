package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The keep gazetteer: well-known brands, companies, products, carriers
// and places, many named after people ("Hugo Boss", "Goldman Sachs",
// "Earl Grey", "Paris Charles de Gaulle"), that approvers need to read.
// Their words are set aside before names are looked for (pii.go), unless
// a name cue comes right before them ("Dear Paul Smith"). One phrase a
// line of keepPhrases below; case and punctuation are ignored.

var keepPhrases = `
ralph lauren|polo ralph lauren|hugo boss|boss orange|dr martens|doc martens|dr. martens|calvin klein|tommy hilfiger
louis vuitton|ted baker|paul smith|kate spade|michael kors|tory burch|marc jacobs|giorgio armani|emporio armani
christian dior|yves saint laurent|saint laurent|jimmy choo|stella mccartney|vera wang|karl lagerfeld|tom ford
estée lauder|estee lauder|john deere|harley-davidson|harley davidson|levi strauss|levi's|ben sherman|fred perry
charles tyrwhitt|jack wolfskin|vivienne westwood|alexander mcqueen|alexander wang|max mara|carolina herrera
oscar de la renta|salvatore ferragamo|coco chanel|chanel|gucci|prada|versace|valentino|fendi|givenchy|balenciaga
hermès|hermes|burberry|lacoste|christian louboutin|manolo blahnik|jean paul gaultier|thierry mugler|mugler
paco rabanne|nina ricci|marc o'polo|tom tailor|diane von furstenberg|anna sui|betsey johnson
kenneth cole|steve madden|sam edelman|stuart weitzman|anne klein|liz claiborne|perry ellis
john varvatos|joseph abboud|jos. a. bank|brooks brothers|abercrombie & fitch|eddie bauer|l.l.bean|ll bean
l.l. bean|lands' end|j.crew|j. crew|kenzo|issey miyake|yohji yamamoto|comme des garçons|helmut lang
philipp plein|jil sander|dries van noten|ann demeulemeester|maison margiela|martin margiela|paul & shark
jack & jones|jack jones|timberland|clarks|church's|john lobb|russell & bromley|kurt geiger|dune london
mary kay|elizabeth arden|helena rubinstein|bobbi brown|laura mercier|charlotte tilbury|jo malone
jo malone london|kiehl's|clinique|lancôme|lancome|yves rocher|l'oréal|l'oreal|max factor|rimmel|sally hansen
william morris|laura ashley|ben & jerry's|ben and jerry's|dr pepper|dr. pepper|dr oetker|dr. oetker
dr scholl's|dr. scholl's|mr clean|mr. clean|mr muscle|mr. muscle|mr. kipling|mr kipling|uncle ben's
aunt jemima|sara lee|little debbie|betty crocker|chef boyardee|orville redenbacher|paul masson
jack daniel's|jack daniels|johnnie walker|jim beam|jameson|captain morgan|jose cuervo|josé cuervo
tanqueray|gordon's|hendrick's|glenfiddich|ballantine's|chivas regal|william grant|grant's|bushmills
earl grey|lady grey|granny smith|pink lady|lady finger|lady fingers|ladyfinger|eggs benedict|beef wellington
peach melba|caesar salad|tom collins|bloody mary|shirley temple|mary jane|mary janes|jack russell
victoria sponge|sally lunn|baby ruth|oh henry|chicken kiev|pavlova|nesselrode|apple charlotte
bananas foster|oysters rockefeller|arnold palmer|john collins|rob roy|harvey wallbanger|tom and jerry
teddy bear|lazy susan|jack o'lantern|tommy gun|john hancock|ferris wheel|bowie knife|sandwich|cardigan
goldman sachs|charles schwab|morgan stanley|merrill lynch|wells fargo|edward jones|raymond james
lehman brothers|dow jones|johnson controls|johnson & johnson|walt disney|disney|warner bros|warner brothers
ernst & young|marks & spencer|marks and spencer|procter & gamble|dolce & gabbana|louis dreyfus|thomas cook
john lewis|sainsbury's|j sainsbury|roche|siemens|porsche|boeing|ferrari|lamborghini|maserati|bugatti
peugeot|renault|citroën|citroen|michelin|bosch|robert bosch|philips|dyson|dell|hewlett-packard|hewlett packard
ford|henry ford|chrysler|dodge|chevrolet|walter p. chrysler|tata|mahindra|birla|aditya birla|adani|bajaj|godrej
jp morgan|j.p. morgan|jpmorgan|j. p. morgan|jpmorgan chase|chase bank|barclays|lloyds|coutts|rothschild
n m rothschild|deloitte|kpmg|arthur andersen|mckinsey|booz allen|booz allen hamilton|bain & company
ogilvy|saatchi & saatchi|leo burnett|wieden+kennedy|william morris endeavor|sotheby's|christie's|bonhams
harrods|selfridges|fortnum & mason|debenhams|john lewis & partners|tiffany & co|cartier|van cleef
van cleef & arpels|harry winston|bulgari|swarovski|pandora|david yurman|fabergé|faberge|ritz|ritz-carlton
hilton hotels|marriott|j.w. marriott|jw marriott|waldorf astoria|wyndham|ramada|hyatt|four seasons
kellogg's|kellogg|heinz|h.j. heinz|campbell's|nestlé|nestle|cadbury|mars|hershey's|hershey|ferrero
lindt|lindt & sprüngli|mccain|mcdonald's|wendy's|carl's jr|arby's|dunkin'|tim hortons|ben's cookies
ronald mcdonald|colonel sanders|kfc|papa john's|little caesars|domino's|marie callender's|boston market
william hill|paddy power|ladbrokes|betfred|charles tyrwhitt|hackett|hackett london|richard james
ted lapidus|pierre cardin|guy laroche|daniel hechter|hugo boss ag|adolf dassler|adidas|puma|rudolf dassler
mercedes-benz|mercedes benz|gottlieb daimler|daimler|ferdinand porsche|enzo ferrari|soichiro honda
toyota|honda|suzuki|yamaha|kawasaki|mitsubishi|matsushita|panasonic|hitachi|toshiba|nissan|mazda|subaru
royal mail|parcelforce|la poste|canada post|australia post|japan post|deutsche post|post nl|postnl
sf express|blue dart|delhivery|dtdc|ecom express|yamato|yamato transport|sagawa|sagawa express|correios
jadlog|loggi|total express|dhl|dhl express|ups|fedex|fedex express|tnt|dpd|gls|hermes|evri|yodel
dhl parcel|amazon logistics|ontrac|lasership|purolator|canpar|aramex|smsa|naqel|poste italiane|bartolini
brt|seur|mrw|correos|correos express|chronopost|colissimo|geodis|dachser|kuehne+nagel|kuehne + nagel
db schenker|schenker|ceva|ceva logistics|maersk|msc|cma cgm|hapag-lloyd|cosco|evergreen marine
são paulo|sao paulo|são paulo cajamar|cajamar|rio de janeiro|belo horizonte|porto alegre|são josé dos campos
osaka kansai|kansai|osaka|tokyo narita|narita|haneda|tokyo haneda|nagoya chubu|chubu centrair|chubu
frankfurt hahn|hahn|london heathrow|heathrow|gatwick|london gatwick|stansted|luton|east midlands
paris charles de gaulle|charles de gaulle|roissy|orly|paris orly|new york jfk|john f. kennedy|jfk
john f kennedy|la guardia|laguardia|newark liberty|george bush intercontinental|ronald reagan washington
louis armstrong new orleans|leipzig/halle|leipzig halle|liège airport|liege airport|liège|cologne bonn
köln bonn|konrad adenauer|franz josef strauss|franz josef strauß|helmut schmidt|willy brandt|memphis
louisville worldport|worldport|incheon|shanghai pudong|pudong|hongqiao|hong kong chek lap kok|chek lap kok
dubai world central|al maktoum|singapore changi|changi|guarulhos|viracopos|viracopos campinas|campinas
galeão|tom jobim|santos dumont|mumbai bhiwandi|bhiwandi|delhi gurugram|gurugram|gurgaon|sriperumbudur
chennai sriperumbudur|indira gandhi international|chhatrapati shivaji|chhatrapati shivaji maharaj
kempegowda|rajiv gandhi international|netaji subhas chandra bose|madrid barajas|barajas|adolfo suárez
milan malpensa|malpensa|linate|leonardo da vinci|fiumicino|marco polo|rotterdam maasvlakte|maasvlakte
antwerp|felixstowe|hamburg altenwerder|altenwerder|jebel ali|king abdulaziz|king khalid|queen alia
jomo kenyatta|o. r. tambo|or tambo|o.r. tambo|murtala muhammed|nnamdi azikiwe|kotoka|ninoy aquino
benito juárez|benito juarez|simón bolívar|simon bolivar|jorge chávez|jorge chavez|václav havel|chopin
lech wałęsa|john lennon|george best|john paul ii|sabiha gökçen|atatürk|ataturk|ben gurion|rafic hariri
`

// placeWords are cities, regions and countries: capitalised words that
// are not names when they stand next to a name-like word ("Osaka
// Kansai", "Frankfurt Hahn"). Ones that are also given names (Florence,
// Victoria, Georgia, Austin) are left out.
var placeWords = `
london paris berlin madrid rome roma milan milano munich münchen hamburg frankfurt cologne köln düsseldorf stuttgart
leipzig dresden bremen hanover hannover nuremberg nürnberg vienna wien zurich zürich geneva genève basel bern
amsterdam rotterdam utrecht eindhoven antwerp antwerpen brussels bruxelles ghent liège luxembourg lyon marseille
toulouse nice nantes strasbourg bordeaux lille rennes barcelona valencia seville sevilla zaragoza málaga malaga
bilbao lisbon lisboa porto turin torino naples napoli palermo genoa genova bologna venice venezia verona
dublin cork belfast glasgow edinburgh manchester liverpool birmingham leeds sheffield bristol newcastle
nottingham leicester southampton cardiff swansea aberdeen copenhagen københavn aarhus oslo bergen stockholm
gothenburg göteborg malmö uppsala helsinki tampere reykjavik warsaw warszawa kraków krakow łódź lodz wrocław
poznań gdańsk gdansk prague praha brno bratislava budapest bucharest bucurești belgrade zagreb ljubljana
athens thessaloniki istanbul ankara izmir moscow moskva москва petersburg санкт-петербург kazan казань
novosibirsk kyiv kiev kharkiv odesa minsk vilnius riga tallinn tbilisi yerevan baku almaty tashkent
tokyo osaka kyoto yokohama nagoya sapporo fukuoka kobe sendai hiroshima kawasaki saitama chiba
seoul busan incheon daegu beijing shanghai guangzhou shenzhen chengdu wuhan hangzhou nanjing tianjin
chongqing xiamen suzhou qingdao dalian taipei kaohsiung hongkong macau singapore kuala lumpur jakarta
surabaya bandung bangkok hanoi saigon manila cebu yangon phnom penh dhaka chittagong karachi lahore islamabad
mumbai delhi bengaluru bangalore hyderabad chennai kolkata pune ahmedabad jaipur surat lucknow kanpur nagpur
indore bhopal patna vadodara ludhiana agra nashik kochi coimbatore visakhapatnam noida gurugram thane
colombo kathmandu dubai abu dhabi sharjah doha riyadh jeddah dammam kuwait manama muscat amman beirut
cairo alexandria casablanca rabat tunis algiers lagos abuja accra nairobi mombasa kampala kigali addis
johannesburg cape durban pretoria luanda kinshasa dakar
sydney melbourne brisbane perth canberra auckland wellington christchurch
toronto montreal montréal vancouver calgary ottawa edmonton winnipeg quebec halifax
chicago boston seattle denver dallas houston phoenix atlanta miami detroit portland philadelphia baltimore
pittsburgh cleveland cincinnati columbus indianapolis nashville louisville milwaukee minneapolis
sacramento oakland tampa newark brooklyn manhattan honolulu anchorage
mexico guadalajara monterrey puebla tijuana bogotá bogota medellín medellin cali lima quito guayaquil
caracas valparaíso valparaiso montevideo asunción asuncion
curitiba recife fortaleza manaus belém belem goiânia goiania brasília brasilia florianópolis
campinas guarulhos cajamar osasco barueri jundiaí jundiai niterói
karnataka telangana maharashtra tamil nadu kerala gujarat rajasthan punjab haryana bihar odisha assam
bavaria bayern catalonia catalunya lombardy lombardia tuscany toscana andalusia andalucía ontario
quebec texas california florida england scotland wales ireland germany france spain italy portugal
netherlands belgium switzerland austria poland sweden norway denmark finland japan china india brazil
shibuya shinjuku minato chiyoda chuo osaka-shi kansai kanto hokkaido okinawa
`

// keepIndex maps the first word of each keep phrase, lower case, to
// the phrases' words.
var keepIndex = func() map[string][][]string {
	m := map[string][][]string{}
	addPhrase := func(ph string) {
		ph = strings.TrimSpace(ph)
		if ph == "" {
			return
		}
		var ws []string
		for _, w := range words(nil, ph) {
			ws = append(ws, keepLower(ph[w.start:w.end]))
		}
		if len(ws) > 0 {
			m[ws[0]] = append(m[ws[0]], ws)
		}
	}
	for _, line := range strings.Split(keepPhrases, "\n") {
		for _, ph := range strings.Split(line, "|") {
			addPhrase(ph)
		}
	}
	for _, w := range strings.Fields(placeWords) {
		addPhrase(w)
	}
	return m
}()

func keepLower(w string) string { return string(appendLower(nil, w)) }

// appendLower appends w in lower case, with ’ as '.
func appendLower(dst []byte, w string) []byte {
	for _, r := range w {
		switch {
		case r == '’':
			dst = append(dst, '\'')
		case r < utf8.RuneSelf:
			dst = append(dst, lowerASCII(byte(r)))
		default:
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
	}
	return dst
}

// keepWords sets aside the words of well-known brands, companies,
// products and places, longest phrase first, so that no name is found in
// them. A phrase right after a name cue or honorific that is not part of
// it ("Dear Paul Smith", "customer Hugo Boss") is left to the name rules.
func (p *piiScan) keepWords() {
	for k := 0; k < len(p.w); k++ {
		w := p.w[k]
		if w.used || w.shape != wAlpha || w.upper == 0 {
			continue // only capitalised words start a phrase: names are capitalised too
		}
		if w.end-w.start > 40 {
			continue
		}
		if key, ok := lexKey(p.text(k)); ok && w.plain && !keepFilter[key] {
			continue // no phrase starts with a word of this length, first and last letter
		}
		var buf [64]byte
		phs := keepIndex[string(appendLower(buf[:0], p.text(k)))]
		if len(phs) == 0 {
			continue
		}
		best := 0
		for _, ph := range phs {
			if len(ph) <= best || k+len(ph) > len(p.w) {
				continue
			}
			ok := true
			for n := 1; n < len(ph) && ok; n++ {
				ok = p.w[k+n].gap&(gNewline|gToken) == 0 && !p.w[k+n].used && p.w[k+n].end-p.w[k+n].start <= 40 &&
					string(appendLower(buf[:0], p.text(k+n))) == ph[n]
			}
			if ok {
				best = len(ph)
			}
		}
		if best == 0 || !p.has(k, lxTitle) && p.cued(k) {
			continue
		}
		meter.add(best)
		for n := k; n < k+best; n++ {
			p.w[n].used = true
		}
		k += best - 1
	}
}

// keepFilter tells, for an ASCII word, whether a keep phrase starts with a
// word of its length, first and last letter (see lexFilter).
var keepFilter = func() *[32 * 27 * 27]bool {
	var f [32 * 27 * 27]bool
	for w := range keepIndex {
		if k, ok := lexKey(w); ok {
			f[k] = true
		}
	}
	return &f
}()
