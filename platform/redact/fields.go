package redact

import "bytes"

// Field names that mean secret or personal data. Names are compared after
// normaliseField: lower case, without '_', '-', '.', spaces and other
// punctuation, so cardNumber, Card-Number and CARD_NUMBER are one name.

// maxFieldName bounds the normalised names compared; longer ones are not
// sensitive.
const maxFieldName = 64

// fieldNames are sensitive names matched whole. A name mapped to "" is not
// sensitive even though it ends like one (iphone, microphone).
var fieldNames = map[string]string{
	// Secrets.
	"pwd": KindSecret, "pw": KindSecret, "pass": KindSecret, "auth": KindSecret,
	"pin": KindSecret, "otp": KindSecret, "totp": KindSecret, "mfacode": KindSecret,
	"cvv": KindSecret, "cvc": KindSecret, "cvv2": KindSecret, "cvc2": KindSecret, "csc": KindSecret,
	"dsn": KindSecret, "passwort": KindSecret, "kennwort": KindSecret, "motdepasse": KindSecret,
	"contraseña": KindSecret, "contrasena": KindSecret, "senha": KindSecret,
	"パスワード": KindSecret, "密码": KindSecret,
	// Not secrets: pagination cursors.
	"nexttoken": "", "pagetoken": "", "nextpagetoken": "", "continuationtoken": "",
	// Contact details.
	"mail": KindEmail, "correo": KindEmail, "correoelectronico": KindEmail, "courriel": KindEmail,
	"メールアドレス": KindEmail, "邮箱": KindEmail,
	"tel": KindPhone, "fax": KindPhone, "cell": KindPhone, "msisdn": KindPhone,
	"telefon": KindPhone, "telefono": KindPhone, "teléfono": KindPhone, "handy": KindPhone,
	"portable": KindPhone, "celular": KindPhone, "movil": KindPhone, "móvil": KindPhone,
	"電話": KindPhone, "電話番号": KindPhone, "电话": KindPhone, "手机": KindPhone,
	"iphone": "", "smartphone": "", "microphone": "", "headphone": "", "automobile": "",
	"ismobile": "",
	// Payment.
	"card": KindCard, "cc": KindCard, "ccnumber": KindCard, "pan": KindCard,
	"primaryaccountnumber": KindCard, "kreditkarte": KindCard, "tarjeta": KindCard,
	"numerodetarjeta": KindCard, "numérodecarte": KindCard, "numerodecarte": KindCard,
	"acctnumber": KindAccount, "accountno": KindAccount, "acctno": KindAccount,
	"kontonummer": KindAccount,
	// National identifiers.
	"nino": KindNINO, "nationalinsurancenumber": KindNINO,
	"nationalid": KindID, "nationalidnumber": KindID, "taxid": KindID, "tin": KindID,
	"passport": KindID, "passportno": KindID, "driverslicense": KindID, "driverlicense": KindID,
	"driverslicence": KindID, "drivinglicence": KindID, "idnumber": KindID,
	"personalnumber": KindID, "steuerid": KindID, "dni": KindID, "nif": KindID, "nie": KindID,
	"cpf": KindID, "curp": KindID, "aadhaar": KindID, "personnummer": KindID, "bsn": KindID,
	// Addresses.
	"address": KindAddress, "homeaddress": KindAddress, "billingaddress": KindAddress,
	"shippingaddress": KindAddress, "postaladdress": KindAddress, "mailingaddress": KindAddress,
	"deliveryaddress": KindAddress, "residentialaddress": KindAddress,
	"customeraddress": KindAddress, "useraddress": KindAddress, "contactaddress": KindAddress,
	"permanentaddress": KindAddress, "currentaddress": KindAddress, "physicaladdress": KindAddress,
	"registeredaddress": KindAddress, "addressline": KindAddress, "addressline1": KindAddress,
	"addressline2": KindAddress, "addressline3": KindAddress, "address1": KindAddress,
	"address2": KindAddress, "housenumber": KindAddress, "zip": KindAddress,
	"adresse": KindAddress, "anschrift": KindAddress, "strasse": KindAddress,
	"straße": KindAddress, "direccion": KindAddress, "dirección": KindAddress,
	"住所": KindAddress, "地址": KindAddress,
	// Dates of birth.
	"birth": KindDOB, "geburtsdatum": KindDOB, "fechadenacimiento": KindDOB,
	"datedenaissance": KindDOB, "生年月日": KindDOB,
	// Names.
	"middlename": KindName, "maidenname": KindName, "customername": KindName,
	"cardholder": KindName, "cardholdername": KindName, "accountholder": KindName,
	"accountholdername": KindName, "nameoncard": KindName, "vorname": KindName,
	"nachname": KindName, "apellido": KindName, "apellidos": KindName, "prenom": KindName,
	"prénom": KindName, "nomdefamille": KindName,
	// IP addresses.
	"ip": KindIP, "clientip": KindIP, "remoteip": KindIP, "remoteaddr": KindIP,
	"remoteaddress": KindIP, "xforwardedfor": KindIP, "xrealip": KindIP, "sourceip": KindIP,
	"srcip": KindIP, "userip": KindIP,
	"macaddress": "", "listenaddress": "", "bindaddress": "", "serveraddress": "",
}

// fieldSuffixes are sensitive name endings (userEmail, db_password,
// X-Api-Key), longest first where one ends another.
var fieldSuffixes = []struct {
	suffix []byte
	kind   string
}{
	{[]byte("password"), KindSecret}, {[]byte("passwd"), KindSecret},
	{[]byte("passphrase"), KindSecret}, {[]byte("secret"), KindSecret},
	{[]byte("token"), KindSecret}, {[]byte("apikey"), KindSecret},
	{[]byte("accesskey"), KindSecret}, {[]byte("secretkey"), KindSecret},
	{[]byte("privatekey"), KindSecret}, {[]byte("signingkey"), KindSecret},
	{[]byte("encryptionkey"), KindSecret}, {[]byte("masterkey"), KindSecret},
	{[]byte("accountkey"), KindSecret}, {[]byte("authorization"), KindSecret},
	{[]byte("cookie"), KindSecret}, {[]byte("sessionid"), KindSecret},
	{[]byte("credentials"), KindSecret}, {[]byte("credential"), KindSecret},
	{[]byte("securitycode"), KindSecret}, {[]byte("connectionstring"), KindSecret},
	{[]byte("emailaddress"), KindEmail}, {[]byte("email"), KindEmail},
	{[]byte("phonenumber"), KindPhone}, {[]byte("phoneno"), KindPhone},
	{[]byte("telephone"), KindPhone}, {[]byte("phone"), KindPhone},
	{[]byte("mobilenumber"), KindPhone}, {[]byte("mobile"), KindPhone},
	{[]byte("faxnumber"), KindPhone}, {[]byte("telefonnummer"), KindPhone},
	{[]byte("cardnumber"), KindCard}, {[]byte("creditcard"), KindCard},
	{[]byte("cardno"), KindCard},
	{[]byte("accountnumber"), KindAccount}, {[]byte("bankaccount"), KindAccount},
	{[]byte("iban"), KindIBAN},
	{[]byte("socialsecuritynumber"), KindSSN}, {[]byte("ssn"), KindSSN},
	{[]byte("passportnumber"), KindID},
	{[]byte("ipaddress"), KindIP},
	{[]byte("streetaddress"), KindAddress}, {[]byte("street"), KindAddress},
	{[]byte("streetname"), KindAddress}, {[]byte("postcode"), KindAddress},
	{[]byte("postalcode"), KindAddress}, {[]byte("zipcode"), KindAddress},
	{[]byte("dateofbirth"), KindDOB}, {[]byte("birthdate"), KindDOB},
	{[]byte("birthday"), KindDOB}, {[]byte("dob"), KindDOB},
	{[]byte("firstname"), KindName}, {[]byte("lastname"), KindName},
	{[]byte("fullname"), KindName}, {[]byte("surname"), KindName},
	{[]byte("givenname"), KindName}, {[]byte("familyname"), KindName},
}

// normaliseField appends name to dst in the form names are compared in.
// It reports false for names too long to be sensitive.
func normaliseField(dst []byte, name string) ([]byte, bool) {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c >= 0x80:
		default:
			continue
		}
		if len(dst) == maxFieldName {
			return dst, false
		}
		dst = append(dst, c)
	}
	return dst, len(dst) > 0
}

// fieldKind returns the kind of value a field of this name holds, or ""
// when the name is not sensitive.
func (r *Redactor) fieldKind(name string) string {
	if len(name) > 2*maxFieldName {
		return ""
	}
	var buf [maxFieldName]byte
	k, ok := normaliseField(buf[:0], name)
	if !ok {
		return ""
	}
	if kind, ok := r.nameKind(k); ok {
		return kind
	}
	// Plurals of personal data: emails, phone_numbers, addresses. Not of
	// secrets: input_tokens counts tokens.
	for _, suffix := range [][]byte{[]byte("es"), []byte("s")} {
		if base, ok := bytes.CutSuffix(k, suffix); ok && len(base) > 1 {
			if kind, ok := r.nameKind(base); ok && kind != KindSecret {
				return kind
			}
		}
	}
	return ""
}

func (r *Redactor) nameKind(k []byte) (string, bool) {
	if kind, ok := r.fields[string(k)]; ok {
		return kind, true
	}
	if kind, ok := fieldNames[string(k)]; ok {
		return kind, true
	}
	for _, x := range suffixesByLast[k[len(k)-1]] {
		sf := fieldSuffixes[x]
		if bytes.HasSuffix(k, sf.suffix) {
			return sf.kind, true
		}
	}
	return "", false
}

// suffixesByLast indexes fieldSuffixes by their last byte, in order, so
// that a name is compared only with the endings it could have.
var suffixesByLast = func() (t [256][]uint8) {
	for i, sf := range fieldSuffixes {
		last := sf.suffix[len(sf.suffix)-1]
		t[last] = append(t[last], uint8(i))
	}
	return t
}()

// detected reports whether free text has a detector for kind, which then
// decides instead of the key a value is written under.
func detected(kind string) bool {
	switch kind {
	case KindEmail, KindPhone, KindCard, KindIBAN, KindSSN, KindIP, KindNINO:
		return true
	}
	return false
}
