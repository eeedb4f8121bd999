package redact

import "strings"

// The word lists the PII detectors (pii.go) look words up in: one map,
// lower-case word → flags, so each word of a text costs one lookup.

const (
	lxGiven    uint32 = 1 << iota // a given name (gazetteer)
	lxCue                         // a word that introduces a person's name: customer, Dear, signed
	lxTitle                       // an honorific: Mr, Frau, Mme, Sra
	lxStop                        // a capitalised word that is not a name: The, Please, Order
	lxCompany                     // a word of a company name: Ltd, GmbH, Logistics, Team
	lxParticle                    // a name particle: van, der, de, la, bin, al
	lxDOB                         // a date-of-birth cue: born, DOB, geboren
	lxID                          // an identity-document cue: passport, Ausweis, DNI
	lxIDFiller                    // a word between an id cue and the number: no, number, Nr
	lxStreetEN                    // a street type written after the name: Road, St, Lane
	lxStreetFR                    // a street type written before the name: rue, Calle, Avenida
	lxStreetDE                    // a German street word written on its own: Straße, Weg, Platz
	lxMonth                       // a month name or abbreviation, any of the four languages
	lxUSState                     // a US state code (upper case in text)
	lxPostcue                     // a postcode cue: PLZ, CP, postcode
	lxIDWord1                     // the first word of a two-word id cue: ID card, national ID, tax ID
	lxIDWord2                     // the second word of one
	lxSurname                     // a family name (gazetteer)
)

var lexicon = func() map[string]uint32 {
	m := make(map[string]uint32, 4096)
	add := func(flag uint32, words string) {
		for _, w := range strings.Fields(words) {
			m[strings.ToLower(w)] |= flag
		}
	}
	add(lxGiven, givenNames)
	add(lxGiven, givenNamesMore)
	add(lxSurname, surnames)
	add(lxCue, `customer customers client clients cliente clienta kunde kundin kunden dear hi hello hey
		signed sign from name nom nombre nome holder cardholder recipient addressee empfänger empfaenger
		destinataire destinatario attn attention contact regards sincerely cheers thanks thank gracias merci
		danke cordialement atentamente saludos grüße grüßen gruß gruesse gruessen salutations geehrte geehrter
		liebe lieber cher chère estimado estimada hola bonjour buenos heiße heisse llamo appelle
		passenger guest patient caller requester applicant beneficiary payee tenant-name
		клиент клиентка клиента клиенту покупатель покупательница получатель получателя уважением уважаемый уважаемая зовут
		оформил оформила отправитель менеджер
		العميل العميلة السيد السيدة عزيزي عزيزتي التحية الاسم المستلم
		khách nhận kính gửi chào
		klient klienta klientka pan pani szanowny szanowna pozdrawiam nazywam
		müşteri sayın sevgili adım
		klant geachte beste groet groeten
		caro cara gentile signor signora cordiali saluti chiamo cliente
		prezado prezada obrigado obrigada atenciosamente chamo senhor senhora`)
	add(lxTitle, `mr mrs ms miss mx dr prof herr frau fräulein monsieur madame mme mlle señor señora señorita
		sr sra srta don doña sir dame lady lord`)
	add(lxStop, `the a an this that these those there here i we you he she it they my our your his her its their
		me us him them mine yours ours please thanks thank hi hello hey dear yes no ok okay if when where why how what
		which who whom whose while after before since until unless because although though so then also and or but
		not nor for with without from into onto upon about above below over under again once all any both each
		few more most other some such only own same than too very can will just should now today tomorrow yesterday
		tonight morning evening afternoon night week weekend month year day time order orders refund refunds
		customer customers client service services support team care help desk helpdesk account accounts invoice
		invoices ticket tickets case cases payment payments card cards bank delivery shipping shipment parcel package
		address email mail phone number status update note notes subject re fwd fw cc bcc attached attachment
		regards sincerely best kind warm many cheers greetings hope hopefully unfortunately sorry apologies
		is are was were be been has have had do does did done get got make made see saw seen let lets
		new old first last next previous final total amount price cost fee fees tax vat net gross
		monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
		montag dienstag mittwoch donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche
		lunes martes miércoles miercoles jueves viernes sábado sabado domingo
		christmas easter black cyber prime
		der die das den dem des ein eine einen einem einer ich du er sie es wir ihr mein meine meinen ihre ihren
		bitte danke vielen herzlichen und oder aber nicht mit von zu zum zur bei nach vor auf aus für über unter
		sehr guten tag hallo liebe lieber kunde kundin bestellung rechnung lieferung zahlung konto betrag
		le la les un une des du de je tu il elle nous vous ils elles mon ma mes votre vos notre nos
		merci bonjour bonsoir salut et ou mais pas avec pour dans sur chez commande facture livraison paiement compte
		el los las uno una unos unas yo tú él ella nosotros vosotros ellos ellas mi mis su sus tu tus nuestro
		gracias hola buenos buenas y o pero con sin para por en sobre pedido factura entrega pago cuenta
		api json http https url id ids uuid sku skus ok error errors warning info debug trace level msg
		inc ltd llc gmbh corp plc
		street road avenue lane drive court boulevard way place square terrace close
		north south east west northern southern eastern western central upper lower greater
		new san santa saint sankt st los las el la port fort mount mt lake são sao rio buenos hong kuala tel cape
		abu ho kansas mexico costa puerto porto
		united states kingdom republic america europe asia africa
		visa mastercard amex paypal stripe apple google amazon microsoft android iphone ipad windows linux
		nike adidas puma reebok converse vans ford toyota honda bmw audi tesla volkswagen mercedes
		transit focus fiesta mustang corolla civic golf polo model air max pro plus ultra mini lite
		premium standard basic express economy priority overnight
		bearer basic token national insurance original message version release build
		mr mrs ms dr prof sir station airport park bridge falls harbour harbor centre center hotel hospital
		university college school church beach bay river valley city county town village district region
		province state area zone warehouse depot hub terminal`)
	add(lxCompany, `inc inc. ltd ltd. llc gmbh ag kg ohg ug sa sarl sas sl slu srl spa bv nv plc corp corp. co co. company
		corporation group holdings holding logistics solutions systems services technologies technology tech
		labs partners industries enterprises consulting consultants bank shop store stores market foods motors
		airlines airways team support care desk department dept office media studio studios software networks
		trading traders supplies supply retail wholesale international global worldwide limited
		gesellschaft handel vertrieb société compagnie sociedad compañía comercial distribuciones`)
	add(lxParticle, `van der den von vom zu zur de del della delle di da dos das du des la le bin binti bint ibn ben
		al el ter ten op af av y e mac do`)
	add(lxDOB, `born dob d.o.b birth birthdate birthday geboren geb geburtsdatum geburtstag né née nee naissance
		nacimiento nacido nacida nació nacio nascita nato nata nascimento nascido nascida
		urodzenia urodzony urodzona urodzin ur рождения рождение родился родилась др д.р geboortedatum
		doğum dogum född födelsedatum født fødselsdato syntymäaika narození narozen narozena születési
		生年月日 出生日期 出生年月日 誕生日 生日 생년월일 생일 الميلاد`)
	add(lxID, `passport passports passport# passeport pasaporte reisepass reisepassnummer pass-nr passnummer
		ausweis personalausweis ausweisnummer idcard identity identité identite identidad dni nie nif cni
		cédula cedula licence license licencia führerschein fuehrerschein führerscheinnummer permis carnet
		permiso nir nss national-id steuer-id steueridentifikationsnummer`)
	add(lxIDFiller, `no no. nr nr. num number numbers nummer numéro numero número n° nº # is ist est es : of the my
		mein meine mon ma mi on file card id de du del la le d'identité d'identite national nationale nacional
		documento document doc de conduire conducir driving driver driver's drivers licence license permit`)
	add(lxStreetEN, `street st str road rd avenue ave av lane ln drive dr court ct boulevard blvd way place pl
		square sq terrace close crescent cres highway hwy parkway pkwy circle cir row mews gardens grove hill walk
		parade rise`)
	add(lxStreetFR, `rue avenue av boulevard bd bld allée allee chemin quai impasse place cours route calle avenida
		avda paseo plaza camino carrera ronda travesía travesia via viale piazza corso
		rua travessa alameda praça praca rodovia estrada largo laan ul al ул улица проспект пр пер переулок бульвар
		cad caddesi sok sokak mah`)
	add(lxStreetDE, `straße strasse str weg platz allee gasse ring damm ufer chaussee gate gata vej gade straat`)
	add(lxMonth, `january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec januar februar märz maerz mai juni juli oktober dezember
		janvier février fevrier mars avril juin juillet août aout septembre octobre novembre décembre decembre
		janv févr fevr avr juil sept oct déc enero febrero marzo abril mayo junio julio agosto septiembre
		setiembre octubre noviembre diciembre ene abr ago dic
		stycznia lutego marca kwietnia maja czerwca lipca sierpnia września wrzesnia października pazdziernika
		listopada grudnia styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik listopad grudzień
		января февраля марта апреля мая июня июля августа сентября октября ноября декабря
		январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь
		gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre
		janeiro fevereiro março marco abril maio junho julho agosto setembro outubro novembro dezembro
		januari februari maart april juni juli augustus september oktober november december
		ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık`)
	add(lxUSState, `al ak az ar ca co ct de dc fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm
		ny nc nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy`)
	add(lxPostcue, `plz cp postcode post-code zip zipcode postleitzahl postal cep pin pincode eircode
		indeks kod 〒 郵便番号 邮编 우편번호`)
	add(lxIDWord1, `id national tax identification social`)
	add(lxIDWord2, `card karte carte document documento id number security`)
	return m
}()

// lexFilter is a pre-filter for the lexicon: for an ASCII word of up to 31
// letters, the flags of every lexicon word of the same length, first and
// last letter. Most words of a text are in no list, and this tells so
// without lower-casing and hashing them.
var lexFilter = func() *[32 * 27 * 27]uint32 {
	var f [32 * 27 * 27]uint32
	for w, fl := range lexicon {
		if k, ok := lexKey(w); ok {
			f[k] |= fl
		}
	}
	return &f
}()

// lexKey returns the pre-filter slot of the ASCII word w, in any case, or
// false when w is not one the pre-filter covers.
func lexKey(w string) (int, bool) {
	if len(w) == 0 || len(w) > 31 {
		return 0, false
	}
	return (len(w)*27+lexLetter(w[0]))*27 + lexLetter(w[len(w)-1]), true
}

func lexLetter(c byte) int {
	c |= 0x20
	if 'a' <= c && c <= 'z' {
		return int(c - 'a')
	}
	return 26
}
